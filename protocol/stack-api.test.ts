import { describe, expect, it } from 'vitest';
import { REQUESTS, requestTraits, type Method } from './stack-api.ts';

describe('what each request is', () => {
  it('words every failure as what did not happen, never as a method name', () => {
    for (const method of Object.keys(REQUESTS) as Method[]) {
      const words = requestTraits(method).notDone({} as never);
      expect(words, method).toMatch(/^[A-Z"]/);
      expect(words, method).not.toContain('_');
    }
    expect(requestTraits('upload_file').notDone({ name: 'invoice.pdf', bytes: new Uint8Array() })).toBe('invoice.pdf was not added');
    expect(requestTraits('mission').notDone({ text: 'hi' })).toBe('Your message was not saved');
    expect(requestTraits('no_such_thing').notDone({} as never)).toBe('The request "no_such_thing" was not done');
  });

  it('warms the OCR engine for an image being uploaded, and only then', () => {
    const warms = (name: unknown) => requestTraits('upload_file').warmsOcr?.({ name, bytes: new Uint8Array() } as never);
    expect([warms('scan.JPG'), warms('page.tiff'), warms('photo.webp')]).toEqual([true, true, true]);
    expect([warms('invoice.pdf'), warms('notes.txt'), warms(undefined)]).toEqual([false, false, false]);
    expect(requestTraits('read_file').warmsOcr).toBeUndefined();
  });

  it('moves a file read whole to the page, and copies a view of a larger buffer', () => {
    const whole = new Uint8Array(8);
    const result = (bytes: Uint8Array) => ({ path: 'a', size: bytes.byteLength, mime: 'text/plain', bytes });
    expect(requestTraits('read_file').transfers?.(result(whole))).toEqual([whole.buffer]);
    expect(requestTraits('read_file').transfers?.(result(new Uint8Array(new ArrayBuffer(16), 4, 8)))).toEqual([]);
  });
});
