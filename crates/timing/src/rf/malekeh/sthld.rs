//! The adaptive stall-threshold controller of Malekeh §7: execution is cut into equal
//! intervals (`register_file.malekeh.interval`, 10,000 cycles in the paper); at the end
//! of each, the relative change of IPC from the previous interval moves STHLD for the
//! next one.
//!
//! The paper's state machine (its Figure 4) is not in our text, only its prose: IPC as a
//! function of STHLD is flat (slowly rising) up to a *knee* and falls steeply after it;
//! small IPC changes mean "still on the flat part, keep walking toward the knee"; a large
//! change means either the steep part or a new program phase, answered by a speculative
//! increase that is undone if the next interval loses IPC; the controller then settles
//! and stays until the next large change. The states and deltas below are OUR design
//! following that prose:
//!
//! | state      | small change (`|d| < small`)        | large gain (`d >= small`) | large loss (`d <= -small`)          |
//! |------------|--------------------------------------|---------------------------|-------------------------------------|
//! | `Climb`    | `+step`, stay                        | speculate                 | speculate                           |
//! | `Speculate`| `+step`, to `Climb` (it paid)        | `+step`, to `Climb`       | undo and `-step`, to `Descend`      |
//! | `Descend`  | `+step` (back to the last flat point), to `Hold` | `-step`, stay  | speculate (a new phase)             |
//! | `Hold`     | stay                                 | speculate                 | speculate                           |
//!
//! "Speculate" is `+step` into state `Speculate`, remembering the threshold before the
//! move. `d` is `(ipc - previous) / previous`. Walking up the flat part crosses the knee
//! with a large loss; the speculative step loses again, so the controller goes back below
//! the crossing and descends while each step down still gains a lot (the steep part);
//! the first small change says both points are on the flat part, and the higher of them
//! — the knee, within one step — is kept. After a phase change the large IPC change
//! restarts the walk from where the threshold is: up if the new flat part is wider, down
//! if it is narrower. STHLD stays within `0..=max`.
//!
//! Intervals in which the core issued nothing carry no information and leave the state
//! unchanged (an idle core between kernels must not drive the threshold).

/// The controller's state (see the module docs' table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SthldState {
    /// Walking up the flat part of the IPC curve.
    Climb,
    /// A speculative increase after a large change; `from` is the threshold before it.
    Speculate {
        /// STHLD before the speculative step.
        from: u32,
    },
    /// Walking down the steep part after an overshoot.
    Descend,
    /// Settled at the knee until the next large change.
    Hold,
}

/// The adaptive STHLD controller of one core.
#[derive(Clone, Debug)]
pub struct SthldController {
    sthld: u32,
    step: u32,
    max: u32,
    small: f64,
    state: SthldState,
    previous_ipc: Option<f64>,
}

impl SthldController {
    /// A controller starting at `initial` in state `Climb`, moving by `step`, bounded by
    /// `max`; a relative IPC change below `small` (e.g. 0.05) is small.
    pub fn new(initial: u32, step: u32, max: u32, small: f64) -> Self {
        SthldController {
            sthld: initial.min(max),
            step: step.max(1),
            max,
            small,
            state: SthldState::Climb,
            previous_ipc: None,
        }
    }

    /// The threshold in force.
    pub fn sthld(&self) -> u32 {
        self.sthld
    }

    /// The current state.
    pub fn state(&self) -> SthldState {
        self.state
    }

    fn up(&mut self) {
        self.sthld = self.sthld.saturating_add(self.step).min(self.max);
    }

    fn down_from(&mut self, from: u32) {
        self.sthld = from.saturating_sub(self.step);
    }

    fn speculate(&mut self) {
        self.state = SthldState::Speculate { from: self.sthld };
        self.up();
    }

    /// The end of an interval in which the core achieved `ipc`. Returns the threshold for
    /// the next interval.
    pub fn end_interval(&mut self, ipc: f64) -> u32 {
        if ipc <= 0.0 {
            return self.sthld;
        }
        let Some(prev) = self.previous_ipc.replace(ipc) else {
            // The first measurement: nothing to compare with; start walking.
            self.up();
            return self.sthld;
        };
        let d = (ipc - prev) / prev;
        let small = d.abs() < self.small;
        match self.state {
            SthldState::Climb => {
                if small {
                    self.up();
                } else {
                    self.speculate();
                }
            }
            SthldState::Speculate { from } => {
                if d <= -self.small {
                    // The speculative step lost: undo it and one more.
                    self.down_from(from);
                    self.state = SthldState::Descend;
                } else {
                    self.state = SthldState::Climb;
                    self.up();
                }
            }
            SthldState::Descend => {
                if small {
                    // Both points are on the flat part: the higher one is the knee.
                    self.up();
                    self.state = SthldState::Hold;
                } else if d > 0.0 {
                    if self.sthld == 0 {
                        self.state = SthldState::Hold;
                    } else {
                        let s = self.sthld;
                        self.down_from(s);
                    }
                } else {
                    self.speculate();
                }
            }
            SthldState::Hold => {
                if !small {
                    self.speculate();
                }
            }
        }
        self.sthld
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A synthetic IPC-vs-STHLD curve: `level` rising by 0.1% per cycle of threshold up
    /// to `knee`, then falling by a factor e^-0.02 per cycle (15% per step of 8).
    fn curve(level: f64, knee: u32) -> impl Fn(u32) -> f64 {
        move |s| {
            let s = f64::from(s);
            let k = f64::from(knee);
            if s <= k {
                level * (1.0 + 0.001 * s)
            } else {
                level * (1.0 + 0.001 * k) * (-0.02 * (s - k)).exp()
            }
        }
    }

    /// Runs `n` intervals on `ipc`, returning the thresholds chosen.
    fn run(c: &mut SthldController, ipc: &dyn Fn(u32) -> f64, n: usize) -> Vec<u32> {
        (0..n).map(|_| c.end_interval(ipc(c.sthld()))).collect()
    }

    #[test]
    fn converges_to_the_knee_and_stays() {
        let mut c = SthldController::new(0, 8, 1000, 0.05);
        let trace = run(&mut c, &curve(1.0, 40), 30);
        // 0 -> 8 -> ... -> 48 (past the knee: -15%) -> speculative 56 (-15%) -> undo to
        // 40 (+37%) -> 32 (small) -> back to 40 and hold.
        assert_eq!(
            &trace[..11],
            &[8, 16, 24, 32, 40, 48, 56, 40, 32, 40, 40],
            "{trace:?}"
        );
        assert_eq!(c.state(), SthldState::Hold);
        assert!(trace[10..].iter().all(|&s| s == 40), "{trace:?}");
    }

    #[test]
    fn knees_between_steps_are_found_within_one_step() {
        for knee in [5, 13, 27, 61, 100, 203] {
            let mut c = SthldController::new(0, 8, 1000, 0.05);
            let trace = run(&mut c, &curve(2.0, knee), 80);
            let last = *trace.last().unwrap_or(&0);
            assert_eq!(c.state(), SthldState::Hold, "knee {knee}: {trace:?}");
            assert!(
                last <= knee && knee - last < 8,
                "knee {knee}: settled at {last}: {trace:?}"
            );
        }
    }

    #[test]
    fn reconverges_after_a_phase_change_both_ways() {
        // Narrower flat part: the current threshold is now on the steep part.
        let mut c = SthldController::new(0, 8, 1000, 0.05);
        run(&mut c, &curve(1.0, 80), 40);
        assert_eq!(c.sthld(), 80);
        let trace = run(&mut c, &curve(1.0, 24), 40);
        assert_eq!(c.state(), SthldState::Hold, "{trace:?}");
        assert_eq!(c.sthld(), 24, "{trace:?}");
        // Wider flat part, at a different IPC level (the large change that wakes it).
        let trace = run(&mut c, &curve(1.5, 120), 40);
        assert_eq!(c.state(), SthldState::Hold, "{trace:?}");
        assert_eq!(c.sthld(), 120, "{trace:?}");
    }

    #[test]
    fn idle_intervals_change_nothing_and_the_bounds_hold() {
        let mut c = SthldController::new(0, 8, 20, 0.05);
        assert_eq!(c.end_interval(0.0), 0);
        assert_eq!(c.state(), SthldState::Climb);
        // A flat curve: it climbs to the bound and stays there.
        let trace = run(&mut c, &|_| 1.0, 10);
        assert_eq!(trace, [8, 16, 20, 20, 20, 20, 20, 20, 20, 20]);
        // Knee at 0: it descends to 0 and holds.
        let mut c = SthldController::new(16, 8, 100, 0.05);
        run(&mut c, &curve(1.0, 0), 20);
        assert_eq!((c.sthld(), c.state()), (0, SthldState::Hold));
    }
}
