//! Giving freed heap back to the operating system.
//!
//! A write buffer holds M_B/2 bytes in many small allocations made by the writers' threads; glibc's malloc
//! keeps one arena per thread and returns an arena's free memory to the system only from its top, so once a
//! frozen buffer is flushed and dropped its pages mostly stay resident, and a process running several writer
//! threads holds well above what it uses (`cosine bench --workload ycsb-a --records 1000000 --ops 20000
//! --memory 33554432`: peak resident 58-63 MiB without, 51-56 MiB with, for a heap that never exceeds 39 MiB).
//! RocksDB avoids this with a memtable arena, but our buffers free an overwritten value at once (the cost
//! model counts a buffer's distinct keys), so they cannot live in an append-only arena.

/// Asks the allocator to return free pages to the system; called after a flushed buffer is dropped (once per
/// M_B/2 bytes written), never on the write path. glibc only: other allocators return memory themselves.
pub(crate) fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks and trims the allocator's own free lists; it takes no pointers from us.
    unsafe {
        libc::malloc_trim(0);
    }
}
