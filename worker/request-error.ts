// The one error the user reads as it is: a refusal whose message says what is wrong and what to do
// (a name that cannot be a file, a task's bad schedule, a full disk), with its code for the caller.
// Anything else a request throws is a failure, worded by the request's traits (protocol/stack-api.ts).
import type { ErrorShape } from '../protocol/errors.ts';

export class RequestError extends Error {
  constructor(readonly shape: ErrorShape) {
    super(shape.message);
  }
}

/** A request the stack cannot take as asked (`bad_request`): each capability's own refusals extend it. */
export class BadRequestError extends RequestError {
  constructor(message: string) {
    super({ code: 'bad_request', message });
  }
}
