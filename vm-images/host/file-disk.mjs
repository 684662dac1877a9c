// A v86 disk backed by a file through synchronous positional IO: the same calls an OPFS
// FileSystemSyncAccessHandle offers in a worker. Every guest write reaches the file at once, and
// the disk stays out of save_state (get_state returns nothing).
import { closeSync, fstatSync, fsyncSync, openSync, readSync, writeSync } from 'node:fs';

export class FileDisk {
  constructor(path) {
    this.fd = openSync(path, 'r+');
    this.byteLength = fstatSync(this.fd).size;
    this.onload = undefined;
    this.onprogress = undefined;
  }

  load() {
    this.onload?.({});
  }

  get_from_cache(offset, len) {
    const bytes = new Uint8Array(len);
    readSync(this.fd, bytes, 0, len, offset);
    return bytes;
  }

  get(offset, len, callback) {
    callback(this.get_from_cache(offset, len));
  }

  get_and_cache(offset, len, callback) {
    this.get(offset, len, callback);
  }

  set(offset, bytes, callback) {
    writeSync(this.fd, bytes, 0, bytes.length, offset);
    callback();
  }

  get_buffer(callback) {
    callback(undefined); // the whole disk is never handed out as one buffer
  }

  get_state() {
    return [];
  }

  set_state() {}

  close() {
    fsyncSync(this.fd);
    closeSync(this.fd);
  }
}
