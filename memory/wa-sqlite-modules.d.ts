// Types for the wa-sqlite module the package ships without declarations: the OPFS VFS we use.

declare module '@journeyapps/wa-sqlite/src/examples/OPFSCoopSyncVFS.js' {
  /** Synchronous OPFS VFS; dedicated workers only. Several connections take turns via Web Locks. */
  export class OPFSCoopSyncVFS implements SQLiteVFS {
    static create(name: string, module: unknown): Promise<OPFSCoopSyncVFS>;
    name: string;
    mxPathname?: number;
    close(): void | Promise<void>;
    isReady(): boolean | Promise<boolean>;
    hasAsyncMethod(methodName: string): boolean;
    xOpen(pVfs: number, zName: number, pFile: number, flags: number, pOutFlags: number): number;
    xDelete(pVfs: number, zName: number, syncDir: number): number;
    xAccess(pVfs: number, zName: number, flags: number, pResOut: number): number;
    xFullPathname(pVfs: number, zName: number, nOut: number, zOut: number): number;
    xGetLastError(pVfs: number, nBuf: number, zBuf: number): number;
    xClose(pFile: number): number;
    xRead(pFile: number, pData: number, iAmt: number, iOffsetLo: number, iOffsetHi: number): number;
    xWrite(pFile: number, pData: number, iAmt: number, iOffsetLo: number, iOffsetHi: number): number;
    xTruncate(pFile: number, sizeLo: number, sizeHi: number): number;
    xSync(pFile: number, flags: number): number;
    xFileSize(pFile: number, pSize: number): number;
    xLock(pFile: number, lockType: number): number;
    xUnlock(pFile: number, lockType: number): number;
    xCheckReservedLock(pFile: number, pResOut: number): number;
    xFileControl(pFile: number, op: number, pArg: number): number;
    xSectorSize(pFile: number): number;
    xDeviceCharacteristics(pFile: number): number;
  }
}

