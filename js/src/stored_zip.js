// The members of a stored (uncompressed) zip archive, as views into its bytes:
// the first-visit site-packages archive (tools/start_archives.py), unpacked in
// JS so that none of it passes through the engine's memory. Only what that
// archive uses: no compression, no zip64. Its bytes are verified (sha256) before.
// No imports: tests/dist/test_stored_zip.py runs it in Node.

const DECODER = new TextDecoder();

// -> Map(name -> Uint8Array view), directories left out.
export function storedZipMembers(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let end = bytes.length - 22;  // the end-of-central-directory record (no archive comment)
  while (end >= 0 && view.getUint32(end, true) !== 0x06054b50) end--;
  if (end < 0) throw new Error('not a zip archive');
  const count = view.getUint16(end + 10, true);
  let at = view.getUint32(end + 16, true);
  const members = new Map();
  for (let i = 0; i < count; i++) {
    if (view.getUint32(at, true) !== 0x02014b50) throw new Error('zip central directory damaged');
    const method = view.getUint16(at + 10, true);
    const size = view.getUint32(at + 20, true);
    const nameLength = view.getUint16(at + 28, true);
    const local = view.getUint32(at + 42, true);
    const name = DECODER.decode(bytes.subarray(at + 46, at + 46 + nameLength));
    at += 46 + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
    if (name.endsWith('/')) continue;
    if (method !== 0) throw new Error(`zip member ${name} is compressed; expected a stored archive`);
    if (view.getUint32(local, true) !== 0x04034b50) throw new Error(`zip member ${name}: no local header`);
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    if (start + size > bytes.length) throw new Error(`zip member ${name} runs past the archive`);
    members.set(name, bytes.subarray(start, start + size));
  }
  return members;
}
