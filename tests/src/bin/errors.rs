//! Error behaviour, one scenario per run. Usage: errors <scenario>
//!   fatal-rank   after a barrier, rank 0 sends to a rank that does not exist
//!                (ERRORS_ARE_FATAL)
//!   fatal-root   every rank calls a broadcast with an invalid root
//!   returned     checks every class under ERRORS_RETURN, prints "returned ok"
//!   panic        rank 1 panics while rank 0 waits for it
//!   exit-status  rank 2 returns status 3 while others wait
//!   exit-status-256  rank 1 returns status 256 (0 modulo 256) while rank 0
//!                waits for its message
//!   overflow     after a barrier, the last rank recurses without end
//!   overflow-return  after a barrier, the last rank recurses 32 KiB past its
//!                stack (--stack-size 64K), returns, and calls a barrier

use mpcrs::{ErrorClass, ErrorHandler, Op};

fn main() -> std::process::ExitCode {
    let scenario = std::env::args().nth(1).unwrap_or_default();
    mpcrs::run(|world| -> Result<i32, String> {
        let me = world.rank();
        match scenario.as_str() {
            "fatal-rank" => {
                // Every process has joined the job's network before the error
                // ends the job (the diagnostics test expects each one's line).
                world.barrier().map_err(|e| e.to_string())?;
                if me == 0 {
                    world
                        .send(&[1u8], world.size(), 0)
                        .map_err(|e| e.to_string())?;
                }
                world.barrier().map_err(|e| e.to_string())?;
            }
            "fatal-root" => {
                let mut b = [0u8];
                world.broadcast(&mut b, -3).map_err(|e| e.to_string())?;
            }
            "returned" => {
                world.set_error_handler(ErrorHandler::Return);
                let n = world.size();
                let cases: Vec<(ErrorClass, mpcrs::Result<()>)> = vec![
                    (ErrorClass::Rank, world.send(&[0u8], n, 0)),
                    (
                        ErrorClass::Rank,
                        world.recv(&mut [0u8], n + 5, 0).map(|_| ()),
                    ),
                    (ErrorClass::Tag, world.send(&[0u8], 0, -7)),
                    (ErrorClass::Root, world.broadcast(&mut [0u8], n)),
                    (
                        ErrorClass::Op,
                        world.all_reduce(&[1.0f64], &mut [0.0], &Op::BitAnd),
                    ),
                    (
                        ErrorClass::Count,
                        world.all_reduce(&[1.0f64; 4], &mut [0.0; 2], &Op::Sum),
                    ),
                    (
                        ErrorClass::Buffer,
                        world.reduce(&[1i32], None, &Op::Sum, me),
                    ),
                    (ErrorClass::Arg, world.split(Some(-4), 0).map(|_| ())),
                ];
                for (want, got) in cases {
                    match got {
                        Err(e) if e.class == want && e.rank == me => {}
                        other => return Err(format!("expected {want}, got {other:?}")),
                    }
                }
                world.barrier().map_err(|e| e.to_string())?;
                if me == 0 {
                    println!("returned ok");
                }
            }
            "panic" => {
                if me == 1 {
                    panic!("deliberate failure in rank 1");
                }
                let mut b = [0u8];
                if me == 0 {
                    world.recv(&mut b, 1, 0).map_err(|e| e.to_string())?;
                }
            }
            "exit-status" => {
                if me == 2 {
                    return Ok(3);
                }
                world.barrier().map_err(|e| e.to_string())?;
            }
            "exit-status-256" => {
                if me == 1 {
                    return Ok(256);
                }
                if me == 0 {
                    world.recv(&mut [0u8], 1, 0).map_err(|e| e.to_string())?;
                }
            }
            "overflow" => {
                world.barrier().map_err(|e| e.to_string())?;
                if me == world.size() - 1 {
                    let depth = deep(usize::MAX);
                    return Err(format!("recursion ended at depth {depth}"));
                }
                world.barrier().map_err(|e| e.to_string())?;
            }
            "overflow-return" => {
                world.barrier().map_err(|e| e.to_string())?;
                if me == world.size() - 1 {
                    // 96 frames of at least 1 KiB: 96 KiB of a 64 KiB stack.
                    std::hint::black_box(deep(96));
                }
                world.barrier().map_err(|e| e.to_string())?;
            }
            other => return Err(format!("unknown scenario {other:?}")),
        }
        Ok(0)
    })
}

/// Recurses `depth` frames (or until the stack ends), each writing 1 KiB of
/// its own; returns the depth reached.
#[inline(never)]
fn deep(depth: usize) -> usize {
    let mut frame = [0u8; 1024];
    frame.fill(depth as u8);
    std::hint::black_box(&mut frame);
    if depth == 0 {
        return 0;
    }
    1 + deep(depth - 1) + frame[depth % 1024] as usize * 0
}
