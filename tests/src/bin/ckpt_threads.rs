//! Checkpoints with and without a thread of the program's own: rank 0 starts an
//! OS thread, every rank checkpoints (expected: Error), the thread is joined,
//! every rank checkpoints again (expected: Checkpoint). Prints the states.

use std::sync::mpsc;

fn main() -> std::process::ExitCode {
    let (stop_tx, stop_rx) = mpsc::channel::<()>();
    let helper = std::thread::Builder::new()
        .name("app-helper".into())
        .spawn(move || {
            let _ = stop_rx.recv();
        })
        .unwrap();
    let stop = std::sync::Mutex::new(Some((stop_tx, helper)));
    mpcrs::run(|world| -> mpcrs::Result<()> {
        let first = world.checkpoint();
        if world.rank() == 0 {
            if let Some((tx, h)) = stop.lock().unwrap().take() {
                drop(tx);
                h.join().unwrap();
            }
        }
        world.barrier()?;
        let second = world.checkpoint();
        println!("rank {} states {first:?} {second:?}", world.rank());
        Ok(())
    })
}
