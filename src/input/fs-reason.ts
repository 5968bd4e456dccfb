// A file system error in words, for messages that name the path themselves: "permission denied"
// rather than "EACCES: permission denied, mkdir '/x/y'" (Node's text repeats the path and leads with
// the code). Unknown codes keep Node's message.
const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOENT: 'no such file or directory',
  ENOTDIR: 'a part of the path is a file, not a directory',
  EISDIR: 'it is a directory',
  EEXIST: 'it already exists',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is exhausted',
  ENAMETOOLONG: 'the path is too long',
  ELOOP: 'too many symbolic links (a loop?)',
  EMFILE: 'too many open files',
  EIO: 'input/output error (a failing disk?)',
};

export function fsReason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code && REASONS[code]) return REASONS[code];
  return err instanceof Error ? err.message : String(err);
}
