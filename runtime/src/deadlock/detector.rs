//! The deadlock check: process 0 (or the only process) looks every
//! [`PERIOD`]; when its own ranks all wait or have finished, it asks every
//! other process for its state in a round over the signaling network, and a
//! [`Watch`] decides from the rounds. The other processes answer in their
//! progress loop (`on_message`), and print their ranks' lines when process 0
//! reports.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use mpcrs_signaling::ControlKind;

use crate::waits::{self, Summary};

/// How often process 0 looks.
pub(crate) const PERIOD: Duration = Duration::from_millis(250);
/// Quiet rounds in a row, with nothing changed between them, that make a
/// deadlock: two, so that a rank woken just before the first round (its
/// wake-up not yet seen) has run by the second.
const QUIET_ROUNDS: usize = 2;
/// How long process 0 waits for every answer of a round.
const ANSWER_TIME: Duration = Duration::from_secs(1);

const PROBE: u8 = 0;
const STATE: u8 = 1;
const REPORT: u8 = 2;
const REPORTED: u8 = 3;

/// One process's state in a round.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct State {
    pub(crate) ranks: Summary,
    /// Frames this process sent to others, and frames from others it handled.
    pub(crate) sent: u64,
    pub(crate) handled: u64,
    /// Helper tasks at work, or threads of the program calling MPI besides
    /// the ranks' own: either may yet end a rank's wait.
    pub(crate) busy: bool,
}

impl State {
    /// Every rank waits or has finished, and no helper works.
    fn quiet(&self) -> bool {
        !self.busy && self.ranks.waiting + self.ranks.finished == self.ranks.ranks
    }

    fn values(&self) -> Vec<u64> {
        let r = &self.ranks;
        vec![
            r.ranks as u64,
            r.waiting as u64,
            r.finished as u64,
            r.changes,
            self.sent,
            self.handled,
            self.busy as u64,
        ]
    }

    fn from_values(v: &[u64]) -> Option<State> {
        let [ranks, waiting, finished, changes, sent, handled, busy] = v.try_into().ok()?;
        Some(State {
            ranks: Summary {
                ranks: ranks as usize,
                waiting: waiting as usize,
                finished: finished as usize,
                changes,
            },
            sent,
            handled,
            busy: busy != 0,
        })
    }
}

/// This process's state now; `None` before its ranks' slots exist.
pub(crate) fn local() -> Option<State> {
    let ranks = waits::installed()?.summary();
    let (sent, handled) = crate::remote::Fabric::get().map_or((0, 0), |f| f.frame_counts());
    Some(State {
        ranks,
        sent,
        handled,
        busy: crate::checkpoint::helpers_at_work() || waits::foreign_callers(),
    })
}

/// Decides from the rounds, one state per process each.
#[derive(Default)]
pub(crate) struct Watch {
    last: Option<Vec<State>>,
    quiet_in_a_row: usize,
}

impl Watch {
    /// Takes a round; true when it makes a deadlock: every rank of the job
    /// waits or has finished, one at least waits, every frame sent was
    /// handled, and nothing changed since the previous such round.
    pub(crate) fn observe(&mut self, states: Vec<State>) -> bool {
        let quiet = states.iter().all(State::quiet)
            && states.iter().any(|s| s.ranks.waiting > 0)
            && states.iter().map(|s| s.sent).sum::<u64>()
                == states.iter().map(|s| s.handled).sum::<u64>();
        if !quiet {
            self.reset();
            return false;
        }
        if self.last.as_ref() == Some(&states) {
            self.quiet_in_a_row += 1;
        } else {
            self.quiet_in_a_row = 1;
            self.last = Some(states);
        }
        self.quiet_in_a_row >= QUIET_ROUNDS
    }

    /// Something moved: the next quiet round is the first.
    pub(crate) fn reset(&mut self) {
        self.last = None;
        self.quiet_in_a_row = 0;
    }
}

/// Answers that reached process 0: (process, round, step, values).
static ANSWERS: Mutex<Vec<(u32, u64, u8, Vec<u64>)>> = Mutex::new(Vec::new());
static ANSWERED: Condvar = Condvar::new();
static STOPPED: AtomicBool = AtomicBool::new(false);

/// Starts the check in this process if it is the one that runs it (process
/// 0 of `processes`) and `enabled`. A restored process gets the thread back
/// with the rest of its image.
pub(crate) fn start(process: usize, processes: usize, enabled: bool) {
    crate::remote::on_deadlock_messages(on_message);
    if !enabled || process != 0 {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("mpcrs-deadlock".into())
        .spawn(move || watch_job(processes as u32));
    if let Err(e) = spawned {
        tracing::debug!("no deadlock check: {e}");
    }
}

/// Stops the check (the job is ending).
pub(crate) fn stop() {
    STOPPED.store(true, Ordering::Release);
}

fn watch_job(processes: u32) {
    let mut watch = Watch::default();
    let mut round = 0u64;
    while !STOPPED.load(Ordering::Acquire) {
        std::thread::sleep(PERIOD);
        let Some(mine) = local() else { continue };
        if !mine.quiet() {
            watch.reset();
            continue;
        }
        round += 1;
        let mut states = vec![mine];
        if processes > 1 {
            match ask(round, processes, PROBE, STATE) {
                Some(answers) => {
                    // An answer without a state (a process whose ranks are
                    // not set up yet) is a process that is not quiet.
                    states.extend(answers.iter().map(|(_, v)| {
                        State::from_values(v).unwrap_or(State {
                            busy: true,
                            ..State::default()
                        })
                    }));
                }
                None => {
                    watch.reset();
                    continue;
                }
            }
        }
        if STOPPED.load(Ordering::Acquire) {
            return;
        }
        if watch.observe(states) {
            report(round, processes);
        }
    }
}

/// Sends `step` of `round` to every other process and waits for every
/// `answer`, in process order; `None` if one did not come in time.
fn ask(round: u64, processes: u32, step: u8, answer: u8) -> Option<Vec<(u32, Vec<u64>)>> {
    let fabric = crate::remote::Fabric::get()?;
    for p in 1..processes {
        let kind = ControlKind::Deadlock {
            round,
            step,
            values: Vec::new(),
        };
        if fabric.net().signaling.send(p, kind).is_err() {
            return None;
        }
    }
    let deadline = Instant::now() + ANSWER_TIME;
    let mut answers = ANSWERS.lock().unwrap();
    loop {
        let mut got: Vec<(u32, Vec<u64>)> = answers
            .iter()
            .filter(|(_, r, s, _)| *r == round && *s == answer)
            .map(|(p, _, _, v)| (*p, v.clone()))
            .collect();
        if got.len() == processes as usize - 1 {
            answers.retain(|(_, r, _, _)| *r > round);
            got.sort_by_key(|(p, _)| *p);
            return Some(got);
        }
        let left = deadline.checked_duration_since(Instant::now())?;
        answers = ANSWERED.wait_timeout(answers, left).unwrap().0;
    }
}

/// A deadlock message from process `from`, in this process's progress loop.
fn on_message(from: u32, round: u64, step: u8, values: &[u64]) {
    match step {
        PROBE => reply(
            from,
            round,
            STATE,
            local().map_or_else(Vec::new, |s| s.values()),
        ),
        REPORT => {
            print_own_ranks();
            reply(from, round, REPORTED, Vec::new());
        }
        _ => {
            let mut answers = ANSWERS.lock().unwrap();
            // Answers of abandoned rounds are dropped with the next round's.
            answers.retain(|(_, r, _, _)| *r + 2 >= round);
            answers.push((from, round, step, values.to_vec()));
            ANSWERED.notify_all();
        }
    }
}

fn reply(to: u32, round: u64, step: u8, values: Vec<u64>) {
    if let Some(f) = crate::remote::Fabric::get() {
        let _ = f.net().signaling.send(
            to,
            ControlKind::Deadlock {
                round,
                step,
                values,
            },
        );
    }
}

fn print_own_ranks() {
    if let Some(w) = waits::installed() {
        for line in w.describe() {
            mpcrs_settings::report!(error, "mpcrs: deadlock: {line}");
        }
    }
}

/// Prints every rank's line (this process's, then the others' as they print
/// them) and ends the job with [`super::DEADLOCK_STATUS`].
fn report(round: u64, processes: u32) -> ! {
    print_own_ranks();
    if processes > 1 {
        // Each process prints its own ranks; the job ends once all did (or
        // after a while, whatever happened to a process).
        let _ = ask(round + 1, processes, REPORT, REPORTED);
    }
    mpcrs_settings::report!(
        error,
        "mpcrs: deadlock: every rank waits in MPI (or has returned from main) and nothing is in flight; ending the job (exit status {})",
        super::DEADLOCK_STATUS
    );
    crate::process::abort_job(super::DEADLOCK_STATUS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(
        ranks: usize,
        waiting: usize,
        finished: usize,
        changes: u64,
        sent: u64,
        handled: u64,
    ) -> State {
        State {
            ranks: Summary {
                ranks,
                waiting,
                finished,
                changes,
            },
            sent,
            handled,
            busy: false,
        }
    }

    #[test]
    fn two_unchanged_quiet_rounds_make_a_deadlock() {
        let mut w = Watch::default();
        let quiet = vec![state(2, 2, 0, 10, 5, 7), state(2, 1, 1, 4, 7, 5)];
        assert!(!w.observe(quiet.clone()));
        assert!(w.observe(quiet.clone()));
        // A rank that woke and waits again in between: its count moved.
        let mut w = Watch::default();
        assert!(!w.observe(quiet.clone()));
        let mut moved = quiet.clone();
        moved[1].ranks.changes += 2;
        assert!(!w.observe(moved.clone()));
        assert!(w.observe(moved));
    }

    #[test]
    fn a_running_rank_a_frame_in_flight_a_busy_helper_or_a_finished_job_is_no_deadlock() {
        let mut w = Watch::default();
        let running = vec![state(2, 1, 0, 3, 0, 0)];
        assert!(!w.observe(running.clone()) && !w.observe(running));
        let in_flight = vec![state(1, 1, 0, 3, 4, 0), state(1, 1, 0, 3, 0, 3)];
        assert!(!w.observe(in_flight.clone()) && !w.observe(in_flight));
        let mut busy = vec![state(1, 1, 0, 3, 0, 0)];
        busy[0].busy = true;
        assert!(!w.observe(busy.clone()) && !w.observe(busy));
        let all_done = vec![state(2, 0, 2, 3, 1, 1)];
        assert!(!w.observe(all_done.clone()) && !w.observe(all_done));
    }

    #[test]
    fn states_cross_the_wire_whole() {
        let s = state(4, 3, 1, u64::MAX, 9, 8);
        assert_eq!(State::from_values(&s.values()), Some(s));
        assert_eq!(State::from_values(&[1, 2]), None);
    }
}
