//! `IdVec`: a vector indexed by numbers its owner handed out (port numbers fixed when the network is
//! built, packet ids from the arena, the event queue's nodes), so an index is below the length by
//! construction and the per-packet path need not check it. Builds with debug assertions — `make test`'s
//! test profile among them — still check every index; release builds skip the check: 14 % fewer
//! instructions per packet-hop on benchmark 1, ~3 % less time (`bench/README.md`, 2026-11-29 (evening)).
//! Nothing may shrink an `IdVec` while ids into it live. Everything else of `Vec` (push, iteration,
//! slices, `get`) is there through `Deref`.

use std::ops::{Deref, DerefMut, Index, IndexMut};

#[derive(Clone, Debug)]
pub struct IdVec<T>(Vec<T>);

impl<T> Default for IdVec<T> {
    fn default() -> Self {
        IdVec(Vec::new())
    }
}

impl<T> IdVec<T> {
    pub fn with_capacity(n: usize) -> Self {
        IdVec(Vec::with_capacity(n))
    }
}

impl<T> From<Vec<T>> for IdVec<T> {
    fn from(v: Vec<T>) -> Self {
        IdVec(v)
    }
}

impl<T> Deref for IdVec<T> {
    type Target = Vec<T>;
    #[inline(always)]
    fn deref(&self) -> &Vec<T> {
        &self.0
    }
}

impl<T> DerefMut for IdVec<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.0
    }
}

impl<T> Index<usize> for IdVec<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        debug_assert!(i < self.0.len(), "id {i} out of range ({})", self.0.len());
        // SAFETY: ids index only the vector that issued them, which never shrinks while they live
        // (the module's contract; checked in debug builds).
        unsafe { self.0.get_unchecked(i) }
    }
}

impl<T> IndexMut<usize> for IdVec<T> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        debug_assert!(i < self.0.len(), "id {i} out of range ({})", self.0.len());
        // SAFETY: as `index`.
        unsafe { self.0.get_unchecked_mut(i) }
    }
}

impl<T> Index<std::ops::Range<usize>> for IdVec<T> {
    type Output = [T];
    #[inline]
    fn index(&self, r: std::ops::Range<usize>) -> &[T] {
        &self.0[r]
    }
}

impl<T> FromIterator<T> for IdVec<T> {
    fn from_iter<I: IntoIterator<Item = T>>(it: I) -> Self {
        IdVec(it.into_iter().collect())
    }
}

impl<'a, T> IntoIterator for &'a IdVec<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut IdVec<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter_mut()
    }
}

// Only where debug assertions are on (`make test`'s profile): without them an index past the end is
// undefined behaviour, which is why nothing but an owner's own ids may index an `IdVec`.
#[cfg(all(test, debug_assertions))]
mod tests {
    use super::IdVec;

    #[test]
    fn ids_index_and_the_rest_of_vec_works() {
        let mut v: IdVec<u32> = vec![10, 20].into();
        v.push(30);
        v[1] += 1;
        assert_eq!((v[0], v[1], v[2], v.len()), (10, 21, 30, 3));
        assert_eq!(&v[1..3], &[21, 30]);
        assert_eq!(v.iter().sum::<u32>(), 61);
    }

    #[test]
    #[should_panic(expected = "id 2 out of range (2)")]
    fn an_index_past_the_end_is_caught() {
        let v: IdVec<u32> = vec![1, 2].into();
        let _ = v[2];
    }

    #[test]
    #[should_panic(expected = "id 5 out of range (1)")]
    fn a_mutable_index_past_the_end_is_caught() {
        let mut v: IdVec<u32> = vec![1].into();
        v[5] = 0;
    }
}
