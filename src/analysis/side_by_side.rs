//! Many simulations side by side on the rayon pool, with at most one per worker thread open at a
//! time, so that memory is that of as many simulations as there are threads.
//!
//! A plain `par_iter` over simulations does not bound them: a worker waiting inside one
//! simulation's parallel work steals the next simulation and opens it on its own stack, so on 16
//! threads nearly all 42 shapes of a `rank --exact` were open at once (8.7 GB). Here the items go in
//! windows of the pool's thread count, one window after another; a window's stragglers still use
//! every core through their own parallel work. Results never depend on the thread count.

use crate::error::Result;
use rayon::prelude::*;

/// `f` of every item, in the items' order, at most [`rayon::current_num_threads`] of them open
/// at once. The first error in the items' order is returned, and no window after its own runs.
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> Result<R> + Sync) -> Result<Vec<R>> {
    let window = rayon::current_num_threads().max(1);
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(window) {
        let results: Vec<Result<R>> = chunk.par_iter().with_max_len(1).map(&f).collect();
        for r in results {
            out.push(r?);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn no_more_items_are_open_at_once_than_the_pool_has_threads() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let (open, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let items: Vec<u64> = (0..60).collect();
        let out = pool.install(|| {
            map(&items, |&i| {
                let now = open.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                // Parallel work inside an item, some of it slow: the item's worker waits for the
                // parts others took, and while it waits it would steal another item.
                let s: u64 = (0..64u32)
                    .into_par_iter()
                    .with_max_len(1)
                    .map(|k| {
                        std::thread::sleep(std::time::Duration::from_micros(
                            200 + 50 * (k as u64 % 7),
                        ));
                        u64::from(k) % (i + 1)
                    })
                    .sum();
                open.fetch_sub(1, Ordering::SeqCst);
                Ok(s + i)
            })
        });
        let expected: Vec<u64> = (0..60u64)
            .map(|i| (0..64u64).map(|k| k % (i + 1)).sum::<u64>() + i)
            .collect();
        assert_eq!(out.unwrap(), expected);
        assert!(most.load(Ordering::SeqCst) <= 3, "{most:?} open at once");
    }

    #[test]
    fn the_first_error_in_the_items_order_is_the_one_returned() {
        let items: Vec<usize> = (0..50).collect();
        let r = map(&items, |&i| {
            if i % 7 == 3 {
                Err(crate::error::Error::new("item", format!("{i} fails")))
            } else {
                Ok(i)
            }
        });
        assert_eq!(r.unwrap_err().message, "3 fails");
    }
}
