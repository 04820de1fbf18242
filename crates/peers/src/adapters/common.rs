//! What the peers' adapters share: the striped locks that make a read-modify-write atomic for the engines
//! without one of their own, the conversion of an engine's error into a store error, and the types of the
//! `Store` methods they implement.

use cosine_ycsb::{StoreError, StoreResult};

/// Entries a scan returns: (key, value) in key order.
pub(crate) type Entries = Vec<(Vec<u8>, Vec<u8>)>;
/// What a read-modify-write makes of the old value.
pub(crate) type Modify<'a> = &'a mut dyn FnMut(Option<&[u8]>) -> Vec<u8>;

/// An engine's error as a store error, in the engine's own words.
pub(crate) fn e<E: std::fmt::Display>(x: E) -> StoreError {
    StoreError::Peer(x.to_string())
}

/// Stripes that make the peers' read-modify-write atomic (none of them has one built in).
pub(crate) struct Stripes(Vec<std::sync::Mutex<()>>);

impl Stripes {
    /// 64 stripes, none held.
    pub(crate) fn new() -> Self {
        Stripes((0..64).map(|_| std::sync::Mutex::new(())).collect())
    }
    /// A read-modify-write of `key` made atomic by its stripe's lock: `read` the old value, `write` what `f`
    /// makes of it (how every peer without one of its own does it).
    pub(crate) fn modify<V: AsRef<[u8]>>(
        &self,
        key: &[u8],
        f: &mut dyn FnMut(Option<&[u8]>) -> Vec<u8>,
        read: impl FnOnce() -> StoreResult<Option<V>>,
        write: impl FnOnce(&[u8]) -> StoreResult<()>,
    ) -> StoreResult<()> {
        let _g = self.lock(key);
        let old = read()?;
        write(&f(old.as_ref().map(AsRef::as_ref)))
    }
    /// The lock of `key`'s stripe.
    fn lock(&self, key: &[u8]) -> std::sync::MutexGuard<'_, ()> {
        let h = key
            .iter()
            .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(*b as u64));
        self.0[(h % 64) as usize]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }
}
