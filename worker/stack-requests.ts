// How a stack answers a request: the handler for its method, an answer only once the events it
// emitted are stored (what a caller was told happened is durable), and a failure worded for the
// user by the request's traits (protocol/stack-api.ts).
import { ZodError } from 'zod';
import { DbError, toDbErrorShape } from '../memory/index.ts';
import type { ErrorShape } from '../protocol/errors.ts';
import { requestTraits, type Method, type ResultOf, type StackRequest, type StackResponse } from '../protocol/stack-api.ts';
import { toErrorShape } from './agent/errors.ts';
import type { EventLog } from './event-log.ts';
import type { Handlers } from './handlers/context.ts';
import { RequestError } from './request-error.ts';
import { isStorageFull, storageFullMessage } from './storage-full.ts';
import { storageUsage } from '../storage/quota.ts';

/** Answers requests with `handlers` until `closed()` says the stack was closed in this tab. */
export function serveRequests(handlers: Handlers<Method>, log: EventLog, closed: () => boolean) {
  function handle<M extends Method>(request: StackRequest<M>): Promise<ResultOf<M>> {
    const handler = Object.hasOwn(handlers, request.method) ? (handlers[request.method] as Handlers<M>[M]) : undefined;
    if (!handler) throw new RequestError({ code: 'bad_request', message: `There is no request "${String(request.method)}".` });
    return handler(request.params, request.id);
  }
  return async function request<M extends Method>(request: StackRequest<M>): Promise<StackResponse<M>> {
    const requestId = typeof request?.id === 'string' ? request.id : '';
    if (!requestId || typeof request.method !== 'string') {
      return { request_id: requestId, ok: false, error: { code: 'bad_request', message: 'A request needs an id and a method.' } };
    }
    // An answer comes after the events its request emitted are stored and delivered: what a
    // caller was told happened is durable, and its events are already in the subscriber's view.
    if (closed()) return { request_id: requestId, ok: false, error: { code: 'interrupted', message: 'This stack was closed in this tab (to be copied); open it again to go on.' } };
    const failuresBefore = log.storeFailures;
    try {
      const result = await handle(request);
      await log.flushed();
      if (log.storeFailures > failuresBefore) {
        // What the request did is not durable: the caller hears it failed, and why.
        return { request_id: requestId, ok: false, error: await unsavedError(log.lastStoreError, request.method, request.params) };
      }
      return { request_id: requestId, ok: true, result };
    } catch (error) {
      await log.flushed();
      return { request_id: requestId, ok: false, error: describeRequestError(error, request.method, request.params) };
    }
  };
}

async function unsavedError(error: unknown, method: string, params: unknown): Promise<ErrorShape> {
  const notDone = requestTraits(method).notDone(params as never);
  if (isStorageFull(error)) return { code: 'storage', message: storageFullMessage(notDone, await storageUsage()) };
  return { code: 'storage', message: `${notDone}: ${toErrorShape(error).message}` };
}

function describeRequestError(error: unknown, method: string, params: unknown): ErrorShape {
  // A refusal (each capability's own extends RequestError) reads as it is.
  if (error instanceof RequestError) return error.shape;
  if (error instanceof ZodError) {
    return { code: 'bad_request', message: error.issues.map((issue) => `${issue.path.join('.') || 'input'}: ${issue.message}`).join('; ') };
  }
  const notDone = requestTraits(method).notDone(params as never);
  if (isStorageFull(error)) return { code: 'storage', message: storageFullMessage(notDone) };
  if (error instanceof DbError) return { ...toDbErrorShape(error), code: 'storage' };
  const shape = toErrorShape(error);
  return { ...shape, message: `${notDone}: ${shape.message}` };
}

/** Why the work under way stopped when the event log could not store its progress. */
export function stoppedForStorage(error: unknown): ErrorShape {
  return isStorageFull(error)
    ? { code: 'storage', message: storageFullMessage('This request stopped because nothing more could be saved') }
    : { code: 'storage', message: `This request stopped because its progress could not be saved: ${toErrorShape(error).message}` };
}
