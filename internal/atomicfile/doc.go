// Package atomicfile is how scorehub writes a file durably: the one place
// that knows the order of the steps that make a replacement survive a crash
// or a power loss, and the one place that keeps a data directory to a single
// process.
//
// [Write] replaces a file: the new bytes go to a temporary file in the same
// directory, which is flushed to stable storage, renamed over the old file,
// and then the directory is flushed so that the rename itself is durable. A
// crash at any step leaves the old file or the new one, never a mix; a
// temporary file a crash leaves behind is removed by [RemoveTemps] at the
// next open.
//
// [LockDir] creates a data directory when it is missing and takes an
// exclusive flock(2) on a lock file in it, which the kernel drops when the
// process dies, so a crash never leaves a directory locked.
//
// The package depends on the standard library only.
package atomicfile
