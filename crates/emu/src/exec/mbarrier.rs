//! mbarrier objects (PTX ISA §9.7.13.15): a 64-bit word of shared memory holding a
//! phase, the pending and expected arrival counts of the current phase and its
//! transaction count. The ISA leaves the encoding opaque; regsim's is
//!
//! | bits | field |
//! | --- | --- |
//! | 0–20 | pending arrivals of the current phase |
//! | 21–41 | expected arrivals per phase |
//! | 42–62 | tx-count, two's complement |
//! | 63 | phase parity |
//!
//! A phase completes when its pending count and its tx-count are both zero: the parity
//! flips, the pending count reloads from the expected count and the tx-count restarts at
//! zero. The `state` an arrive returns carries the parity of the phase it arrived on (bit
//! 63) and the pending count right after the arrival (bits 0–20), which is what
//! `mbarrier.pending_count` reads back; `test_wait`/`try_wait` with a state ask whether
//! that phase has completed, with a parity whether the phase of that parity has (the
//! current phase's parity differs from it).
//!
//! Each lane's operation is atomic and lanes act in lane order. `try_wait` never
//! suspends: the ISA allows it to return false at once when the phase is incomplete (the
//! time limit is implementation-defined), and programs loop on it.

const FIELD_BITS: u32 = 21;
const FIELD_MASK: u64 = (1 << FIELD_BITS) - 1;
/// Largest arrival count (ISA: `count` is 1 to 2^20 - 1).
pub(super) const MAX_COUNT: u64 = (1 << 20) - 1;
const PARITY: u64 = 1 << 63;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fields {
    pending: u64,
    expected: u64,
    tx: i64,
    parity: bool,
}

fn decode(word: u64) -> Fields {
    let raw_tx = (word >> (2 * FIELD_BITS)) & FIELD_MASK;
    // Sign-extend the 21-bit tx-count.
    let tx = ((raw_tx << (64 - FIELD_BITS)) as i64) >> (64 - FIELD_BITS);
    Fields {
        pending: word & FIELD_MASK,
        expected: (word >> FIELD_BITS) & FIELD_MASK,
        tx,
        parity: word & PARITY != 0,
    }
}

fn encode(f: Fields) -> u64 {
    (f.pending & FIELD_MASK)
        | (f.expected & FIELD_MASK) << FIELD_BITS
        | ((f.tx as u64) & FIELD_MASK) << (2 * FIELD_BITS)
        | if f.parity { PARITY } else { 0 }
}

/// Completes the phase if nothing is pending.
fn settle(mut f: Fields) -> Fields {
    if f.pending == 0 && f.tx == 0 {
        f.parity = !f.parity;
        f.pending = f.expected;
    }
    f
}

/// `mbarrier.init`: the word for a barrier expecting `count` arrivals per phase.
pub(super) fn init(count: u64) -> Result<u64, String> {
    if !(1..=MAX_COUNT).contains(&count) {
        return Err(format!(
            "mbarrier.init count {count} is outside 1..{MAX_COUNT}"
        ));
    }
    Ok(encode(Fields {
        pending: count,
        expected: count,
        tx: 0,
        parity: false,
    }))
}

/// An arrive-on operation of `count` arrivals after an expect-tx of `tx` bytes
/// (`tx` 0 for a plain arrive); `drop` also lowers the expected count. Returns the new
/// word and the state token.
pub(super) fn arrive(
    word: u64,
    count: u64,
    tx: u64,
    drop: bool,
    no_complete: bool,
) -> Result<(u64, u64), String> {
    let mut f = decode(word);
    if f.expected == 0 && f.pending == 0 {
        return Err("arrive on an mbarrier that is not initialised".into());
    }
    if count == 0 || count > f.pending {
        return Err(format!(
            "arrive of {count} on an mbarrier with {} pending arrivals",
            f.pending
        ));
    }
    f = add_tx(f, tx as i64)?;
    if drop {
        f.expected = f.expected.saturating_sub(count);
    }
    f.pending -= count;
    let token = encode(Fields {
        pending: f.pending,
        expected: 0,
        tx: 0,
        parity: f.parity,
    });
    if no_complete && f.pending == 0 && f.tx == 0 {
        return Err("mbarrier.arrive.noComplete completed the phase (undefined in the ISA)".into());
    }
    Ok((encode(settle(f)), token))
}

fn add_tx(mut f: Fields, delta: i64) -> Result<Fields, String> {
    let tx = f.tx + delta;
    if tx.abs() > MAX_COUNT as i64 {
        return Err(format!(
            "mbarrier tx-count {tx} is outside -{MAX_COUNT}..{MAX_COUNT}"
        ));
    }
    f.tx = tx;
    Ok(f)
}

/// `mbarrier.expect_tx` (`delta` > 0) and `mbarrier.complete_tx` (`delta` < 0).
pub(super) fn change_tx(word: u64, delta: i64) -> Result<u64, String> {
    let f = decode(word);
    if f.expected == 0 && f.pending == 0 {
        return Err("tx-count change on an mbarrier that is not initialised".into());
    }
    Ok(encode(settle(add_tx(f, delta)?)))
}

/// `cp.async.mbarrier.arrive` without `.noinc`: the pending count goes up by one now and
/// down by one when the copies complete, which they already have.
pub(super) fn check_initialised(word: u64) -> Result<(), String> {
    let f = decode(word);
    if f.expected == 0 && f.pending == 0 {
        Err("cp.async.mbarrier.arrive on an mbarrier that is not initialised".into())
    } else {
        Ok(())
    }
}

/// Whether the phase named by `operand` has completed: a state token from an arrive, or
/// with `parity` a phase parity.
pub(super) fn phase_complete(word: u64, operand: u64, parity: bool) -> bool {
    let current = decode(word).parity;
    let asked = if parity {
        operand & 1 == 1
    } else {
        operand & PARITY != 0
    };
    current != asked
}

/// `mbarrier.pending_count` of a state token.
pub(super) fn pending_count(token: u64) -> u64 {
    token & FIELD_MASK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_complete_after_the_expected_arrivals_and_reload() {
        let mut w = init(3).unwrap();
        assert!(!phase_complete(w, 0, true), "phase 0 just started");
        let (w1, t1) = arrive(w, 1, 0, false, false).unwrap();
        assert_eq!(pending_count(t1), 2);
        assert!(!phase_complete(w1, t1, false));
        let (w2, t2) = arrive(w1, 2, 0, false, false).unwrap();
        assert_eq!(pending_count(t2), 0);
        // Phase 0 is complete: both its tokens and parity 0 say so; parity 1 does not.
        assert!(phase_complete(w2, t1, false) && phase_complete(w2, t2, false));
        assert!(phase_complete(w2, 0, true) && !phase_complete(w2, 1, true));
        // Phase 1 expects three arrivals again.
        let (w3, t3) = arrive(w2, 1, 0, false, false).unwrap();
        assert_eq!(pending_count(t3), 2);
        assert!(!phase_complete(w3, t3, false));
        w = w3;
        assert!(arrive(w, 3, 0, false, false).is_err(), "over-arrival");
    }

    #[test]
    fn arrive_drop_lowers_the_count_of_later_phases() {
        let w = init(2).unwrap();
        let (w, _) = arrive(w, 1, 0, true, false).unwrap();
        let (w, t) = arrive(w, 1, 0, false, false).unwrap();
        assert!(phase_complete(w, t, false));
        // One arrival now completes a phase.
        let (w, t) = arrive(w, 1, 0, false, false).unwrap();
        assert!(phase_complete(w, t, false));
        assert!(phase_complete(w, 1, true), "phase 1 (odd) complete");
    }

    #[test]
    fn tx_count_holds_the_phase_until_the_bytes_complete() {
        let w = init(1).unwrap();
        let (w, t) = arrive(w, 1, 64, false, false).unwrap();
        assert!(!phase_complete(w, t, false), "64 bytes outstanding");
        let w = change_tx(w, -48).unwrap();
        assert!(!phase_complete(w, t, false));
        let w = change_tx(w, -16).unwrap();
        assert!(phase_complete(w, t, false));
        // complete_tx before expect_tx: the count goes negative and balances.
        let w = change_tx(w, -8).unwrap();
        let w = change_tx(w, 8).unwrap();
        let (w, t) = arrive(w, 1, 0, false, false).unwrap();
        assert!(phase_complete(w, t, false));
    }

    #[test]
    fn misuse_is_an_error() {
        assert!(init(0).is_err() && init(MAX_COUNT + 1).is_err());
        assert!(arrive(0, 1, 0, false, false).is_err(), "uninitialised");
        let w = init(1).unwrap();
        assert!(
            arrive(w, 1, 0, false, true).is_err(),
            "noComplete completing"
        );
        let w = init(2).unwrap();
        let (_, t) = arrive(w, 1, 0, false, true).unwrap();
        assert_eq!(pending_count(t), 1);
        assert!(change_tx(w, MAX_COUNT as i64 + 1).is_err());
    }
}
