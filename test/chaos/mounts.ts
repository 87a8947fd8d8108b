/**
 * Real file-system faults for the resource tests: a small tmpfs (a disk that fills up), an ext4 image on a loop
 * device that the kernel turns read-only after an error (as a failing disk does, with errors=remount-ro), and a
 * read-only bind mount (a folder the agent cannot write, for root too: root ignores chmod). All need root and
 * mount(2); `mountsAvailable()` says whether this machine allows them (CI runs as root on the same kind of VM).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, rmdirSync, statfsSync } from 'node:fs';
import { basename } from 'node:path';

/** mount, losetup and mkfs.ext4 live in sbin folders, which a minimal PATH (env -i, some CI runners) leaves out. */
const SBIN_PATH = [process.env['PATH'] ?? '', '/usr/local/sbin', '/usr/sbin', '/sbin'].filter(Boolean).join(':');

function run(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PATH: SBIN_PATH } });
}

let available: boolean | null = null;

/** Whether tmpfs and loop mounts work here (tried once, on a scratch folder). */
export function mountsAvailable(scratch: string): boolean {
  if (available !== null) return available;
  try {
    mkdirSync(scratch, { recursive: true });
    run('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', scratch]);
    run('umount', [scratch]);
    rmdirSync(scratch);
    run('losetup', ['--version']);
    available = true;
  } catch {
    available = false;
  }
  return available;
}

export function mountTmpfs(dir: string, megabytes: number): void {
  mkdirSync(dir, { recursive: true });
  run('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m,mode=0750`, 'tmpfs', dir]);
}

/** An ext4 file system in `image` mounted on `dir`; the kernel makes it read-only on the first error. */
export function mountExt4(image: string, dir: string, megabytes: number): void {
  mkdirSync(dir, { recursive: true });
  run('truncate', ['-s', `${megabytes}M`, image]);
  run('mkfs.ext4', ['-q', '-F', '-m', '0', image]);
  run('mount', ['-o', 'loop,errors=remount-ro', image, dir]);
}

/** The kernel's own error path (ext4 sysfs trigger_fs_error): the file system turns read-only under open files. */
export function failExt4(dir: string): void {
  const device = basename(run('findmnt', ['-n', '-o', 'SOURCE', dir]).trim());
  execFileSync('sh', ['-c', `echo 1 > /sys/fs/ext4/${device}/trigger_fs_error`]);
}

/** What a person does after a disk error: unmount, check, mount again (read-write). */
export function repairExt4(image: string, dir: string): void {
  run('umount', [dir]);
  try {
    run('e2fsck', ['-f', '-y', image]);
  } catch {
    // e2fsck exits 1 when it fixed something (the error flag the trigger set): expected
  }
  run('mount', ['-o', 'loop,errors=remount-ro', image, dir]);
}

export function bindReadOnly(dir: string): void {
  run('mount', ['--bind', dir, dir]);
  run('mount', ['-o', 'remount,bind,ro', dir]);
}

export function unmount(dir: string): void {
  try {
    run('umount', [dir]);
  } catch {
    run('umount', ['-l', dir]); // busy: detach lazily so the test's temp folder can go
  }
}

/** Unmounts every folder of `mounted`, the last mounted first (one may lie inside another), and empties the list. */
export function unmountAll(mounted: string[]): void {
  for (const dir of mounted.splice(0).reverse()) unmount(dir);
}

/** Takes all but `leaveBytes` of the free space of `dir`'s file system; 0 fills it to the last block. */
export function fill(dir: string, file: string, leaveBytes: number): void {
  const fs = statfsSync(dir);
  const free = fs.bavail * fs.bsize;
  run('fallocate', ['-l', String(Math.max(4096, free - Math.max(leaveBytes, 1024 * 1024))), file]);
  // The last MiB block by block, until the file system says ENOSPC (dd exits 1 then: expected).
  if (leaveBytes === 0) spawnSync('dd', ['if=/dev/zero', `of=${file}.last`, 'bs=4096'], { stdio: 'ignore' });
}

export function freeBytes(dir: string): number {
  const fs = statfsSync(dir);
  return fs.bavail * fs.bsize;
}
