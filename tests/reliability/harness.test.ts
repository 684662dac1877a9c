// The reliability harness's own checks must be able to fail: a damaged filesystem is caught.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, rmSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkDiskImage } from './harness.ts';

const dir = mkdtempSync(join(tmpdir(), 'stackdocs-fsck-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!existsSync('/sbin/mkfs.ext4'))('checkDiskImage', () => {
  const make = (name: string) => {
    const image = join(dir, name);
    execFileSync('/sbin/mkfs.ext4', ['-q', '-F', image, '16M'], { stdio: 'ignore' });
    return image;
  };

  it('passes a clean ext4 image', () => {
    expect(checkDiskImage(make('clean.img'), dir)).toBeNull();
  });

  it('replays a journal left needing recovery, as a mount would, and then passes', () => {
    const image = make('unclean.img');
    execFileSync('/sbin/debugfs', ['-w', '-R', 'feature needs_recovery', image], { stdio: 'ignore' });
    expect(checkDiskImage(image, dir)).toBeNull();
  });

  it('names the damage in one whose inode table was overwritten', () => {
    const image = make('damaged.img');
    // Garbage over the first inodes, the root directory's among them (where the inode table
    // starts, as dumpe2fs says).
    const table = Number(/Inode table at (\d+)/.exec(execFileSync('/sbin/dumpe2fs', [image], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }))![1]);
    const fd = openSync(image, 'r+');
    writeSync(fd, Buffer.alloc(4096, 0xa5), 0, 4096, table * 1024);
    closeSync(fd);
    expect(checkDiskImage(image, dir)).toMatch(/^journal replay: exit [1-9].*garbage/s);
  });
});
