//! The tags of frames on the job's tcp links (the signaling network's and the
//! tcp rails'), and the hello each link opens with: the process number of
//! whoever opened it, checked against the job by the side that accepted.

/// A link's first frame: the opener's process number.
pub const HELLO: u8 = 0;
/// A frame of the runtime's (an MPI message's).
pub const DATA: u8 = 2;
/// A link's last frame from a process that leaves the job in order: its
/// link's end that follows is no death.
pub const GOODBYE: u8 = 3;

/// The hello of process `me`.
pub fn hello(me: u32) -> [u8; 5] {
    let mut h = [HELLO; 5];
    h[1..].copy_from_slice(&me.to_le_bytes());
    h
}

/// The process `frame` says hello from, if it is a hello: `Err` when that is
/// no other process of a job of `count` whose receiver is `me`.
pub fn hello_from(frame: &[u8], me: u32, count: u32) -> Option<Result<u32, String>> {
    if frame.len() != 5 || frame[0] != HELLO {
        return None;
    }
    let from = u32::from_le_bytes(frame[1..5].try_into().unwrap());
    Some(if from >= count || from == me {
        Err(format!("a hello naming process {from} (of {count})"))
    } else {
        Ok(from)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hellos_name_another_process_of_the_job() {
        assert_eq!(hello_from(&hello(3), 0, 4), Some(Ok(3)));
        assert_eq!(
            hello_from(&hello(4), 0, 4),
            Some(Err("a hello naming process 4 (of 4)".into()))
        );
        assert!(matches!(hello_from(&hello(2), 2, 4), Some(Err(_))));
        assert_eq!(hello_from(&[DATA, 0, 0, 0, 0], 0, 4), None);
    }
}
