// What a file system object is, in words, for messages that refuse anything but a regular file
// (inputs, `report -o`, run.lock). A leaf: node's Stats only.
import type fs from 'node:fs';

export function fileKind(st: fs.Stats | fs.BigIntStats): string {
  if (st.isFile()) return 'a regular file';
  if (st.isDirectory()) return 'a directory';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  if (st.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}
