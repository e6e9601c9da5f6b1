/**
 * Reads the format and CPU of an executable or library from its header, so
 * the platform tests need no `file` or binutils: ELF, Mach-O (64-bit, thin)
 * and PE32+ headers are a few fixed offsets each.
 */
export interface ExeFormat {
  format: "elf" | "macho" | "pe";
  arch: "x64" | "arm64" | "other";
  /** executable or shared library */
  kind: "executable" | "library" | "other";
  /** Mach-O only: carries LC_CODE_SIGNATURE (Apple silicon refuses unsigned code). */
  signed?: boolean;
}

const ELF_MACHINE: Record<number, ExeFormat["arch"]> = { 0x3e: "x64", 0xb7: "arm64" };
const MACHO_CPU: Record<number, ExeFormat["arch"]> = { 0x01000007: "x64", 0x0100000c: "arm64" };
const PE_MACHINE: Record<number, ExeFormat["arch"]> = { 0x8664: "x64", 0xaa64: "arm64" };
const LC_CODE_SIGNATURE = 0x1d;

export function exeFormat(buf: Buffer, at = 0): ExeFormat | null {
  if (buf.readUInt32BE(at) === 0x7f454c46) {
    if (buf[at + 4] !== 2 || buf[at + 5] !== 1) return null; // 64-bit little-endian only
    const type = buf.readUInt16LE(at + 16);
    // Position-independent executables are ET_DYN like libraries; an interpreter (PT_INTERP) tells them apart.
    return {
      format: "elf",
      arch: ELF_MACHINE[buf.readUInt16LE(at + 18)] ?? "other",
      kind: type === 2 || (type === 3 && hasInterp(buf, at)) ? "executable" : type === 3 ? "library" : "other",
    };
  }
  if (buf.readUInt32LE(at) === 0xfeedfacf) {
    const fileType = buf.readUInt32LE(at + 12);
    const ncmds = buf.readUInt32LE(at + 16);
    let signed = false;
    for (let i = 0, off = at + 32; i < ncmds; i++) {
      if (buf.readUInt32LE(off) === LC_CODE_SIGNATURE) signed = true;
      off += buf.readUInt32LE(off + 4);
    }
    return {
      format: "macho",
      arch: MACHO_CPU[buf.readUInt32LE(at + 4)] ?? "other",
      kind: fileType === 2 ? "executable" : fileType === 6 ? "library" : "other",
      signed,
    };
  }
  if (buf.readUInt16BE(at) === 0x4d5a) {
    const pe = at + buf.readUInt32LE(at + 0x3c);
    if (buf.readUInt32BE(pe) !== 0x50450000) return null;
    if (buf.readUInt16LE(pe + 24) !== 0x20b) return null; // PE32+ only
    const characteristics = buf.readUInt16LE(pe + 22);
    return { format: "pe", arch: PE_MACHINE[buf.readUInt16LE(pe + 4)] ?? "other", kind: characteristics & 0x2000 ? "library" : "executable" };
  }
  return null;
}

function hasInterp(buf: Buffer, at: number): boolean {
  const phoff = Number(buf.readBigUInt64LE(at + 32));
  const phentsize = buf.readUInt16LE(at + 54);
  const phnum = buf.readUInt16LE(at + 56);
  for (let i = 0; i < phnum; i++) if (buf.readUInt32LE(at + phoff + i * phentsize) === 3) return true;
  return false;
}
