//! [`Transport`] between threads of one process, each acting as one process of
//! a job: level logic runs and is tested without MPI or a network.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::sync::{Arc, Condvar, Mutex};

use crate::transport::Io;
use crate::Transport;

/// Messages in flight, by (sender, receiver, tag).
#[derive(Default)]
struct Queues {
    messages: Mutex<HashMap<(usize, usize, u32), VecDeque<Vec<u8>>>>,
    arrived: Condvar,
}

/// A job of `processes` endpoints that exchange messages in memory.
pub struct MemoryNetwork;

impl MemoryNetwork {
    /// One endpoint per process; hand each to the thread acting as it.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(processes: usize) -> Vec<MemoryTransport> {
        let queues = Arc::new(Queues::default());
        (0..processes)
            .map(|me| MemoryTransport {
                me,
                processes,
                queues: queues.clone(),
            })
            .collect()
    }
}

/// One process's endpoint of a [`MemoryNetwork`].
pub struct MemoryTransport {
    me: usize,
    processes: usize,
    queues: Arc<Queues>,
}

impl Io for MemoryTransport {}

impl Transport for MemoryTransport {
    fn me(&self) -> usize {
        self.me
    }

    fn processes(&self) -> usize {
        self.processes
    }

    fn send(&self, to: usize, tag: u32, data: &[u8]) -> io::Result<()> {
        if to >= self.processes {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("no process {to} in a job of {}", self.processes),
            ));
        }
        self.queues
            .messages
            .lock()
            .unwrap()
            .entry((self.me, to, tag))
            .or_default()
            .push_back(data.to_vec());
        self.queues.arrived.notify_all();
        Ok(())
    }

    fn receive(&self, from: usize, tag: u32) -> io::Result<Vec<u8>> {
        let mut m = self.queues.messages.lock().unwrap();
        loop {
            if let Some(data) = m.get_mut(&(from, self.me, tag)).and_then(|q| q.pop_front()) {
                return Ok(data);
            }
            m = self.queues.arrived.wait(m).unwrap();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_match_by_sender_and_tag_in_order() {
        let mut ends = MemoryNetwork::new(3);
        let c = ends.pop().unwrap();
        let b = ends.pop().unwrap();
        let a = ends.pop().unwrap();
        let t = std::thread::spawn(move || {
            let x = c.receive(0, 7).unwrap();
            let y = c.receive(1, 7).unwrap();
            let z = c.receive(0, 7).unwrap();
            (x, y, z)
        });
        a.send(2, 7, b"first").unwrap();
        a.send(2, 8, b"other tag").unwrap();
        b.send(2, 7, b"from b").unwrap();
        a.send(2, 7, b"second").unwrap();
        let (x, y, z) = t.join().unwrap();
        assert_eq!(
            (&x[..], &y[..], &z[..]),
            (&b"first"[..], &b"from b"[..], &b"second"[..])
        );
        assert!(a.send(3, 0, b"").is_err());
    }
}
