//! The resume hook: the worker calls it before every resume of a ULT, with
//! that ULT's local word. Its own test binary: the hook is set once per process.

use std::sync::Mutex;

use mpcrs_scheduler::Scheduler;

/// (worker thread, local word) of every resume seen.
static SEEN: Mutex<Vec<(std::thread::ThreadId, usize)>> = Mutex::new(Vec::new());

fn record(word: usize) {
    SEEN.lock()
        .unwrap()
        .push((std::thread::current().id(), word));
}

#[test]
fn the_hook_sees_each_resume_with_the_ults_local_word_on_its_worker() {
    assert!(mpcrs_scheduler::set_resume_hook(record));
    assert!(
        !mpcrs_scheduler::set_resume_hook(record),
        "a second hook is refused"
    );
    let s = Scheduler::builder().workers(1).build().unwrap();
    let worker = s
        .handle()
        .spawn_on(0, || {
            let hs: Vec<_> = (1..=3usize)
                .map(|word| {
                    mpcrs_scheduler::spawn_local(move || {
                        mpcrs_scheduler::set_ult_local(word * 10);
                        for _ in 0..2 {
                            mpcrs_scheduler::yield_now();
                        }
                    })
                })
                .collect();
            for j in hs {
                j.join().unwrap();
            }
            std::thread::current().id()
        })
        .join()
        .unwrap();
    let seen = SEEN.lock().unwrap().clone();
    assert!(
        seen.iter().all(|(t, _)| *t == worker),
        "resumed on its worker"
    );
    // Each ULT is first resumed before it set its word (0), then twice after
    // its yields with the word it set.
    for word in [10, 20, 30] {
        assert_eq!(
            seen.iter().filter(|s| s.1 == word).count(),
            2,
            "{word}: {seen:?}"
        );
    }
}
