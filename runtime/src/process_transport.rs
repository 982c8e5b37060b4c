//! Messages between the processes of a job, one endpoint per process, for the
//! storage levels ([`mpcrs_levels::Transport`]): a communicator whose member `p`
//! is the first rank of process `p`, on a context of its own that every process
//! derives alike, so each makes it without a collective. Its messages travel
//! like any other (eagerly, or by rendezvous with one copy), apart from the
//! application's.

use mpcrs_levels::{Io, Transport};

use crate::checkpoint::Stream;
use crate::comm::{derived_context, meet, Communicator};
use crate::group::Group;

/// Keys of the processes' communicators among derived contexts, one per
/// stream of checkpoints.
const PROCESSES_KEY: u64 = 0x6c65_7665_6c73; // "levels"
const APPLICATION_KEY: u64 = 0x6170_706c_6576; // "applev"

/// One process's endpoint of the job's processes (see the module).
pub struct ProcessTransport {
    comm: Communicator,
}

impl ProcessTransport {
    /// The endpoint of the caller's process; `world` is any communicator of
    /// the caller (for its job).
    pub(crate) fn of_job(world: &Communicator) -> ProcessTransport {
        Self::of_universe(&world.shared.universe, Stream::Images)
    }

    /// The endpoint of this process in the job of `universe`, for the levels
    /// of `stream`.
    pub(crate) fn of_universe(
        universe: &std::sync::Arc<crate::universe::Universe>,
        stream: Stream,
    ) -> ProcessTransport {
        let key = match stream {
            Stream::Images => PROCESSES_KEY,
            Stream::Application => APPLICATION_KEY,
        };
        let (firsts, me): (Vec<i32>, usize) = match crate::remote::Fabric::get() {
            Some(f) => (f.first_ranks().map(|r| r as i32).collect(), f.me as usize),
            None => (vec![0], 0),
        };
        let group = Group::from_world_ranks(firsts.clone());
        let shared = meet(universe, derived_context(&[key]), group);
        ProcessTransport {
            comm: Communicator::from_shared(shared, me as i32, firsts[me], "processes"),
        }
    }
}

fn io_error(e: crate::Error) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

fn tag_of(tag: u32) -> std::io::Result<i32> {
    i32::try_from(tag).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("tag {tag} is above the largest MPI tag"),
        )
    })
}

impl Io for ProcessTransport {
    fn blocking(&self, f: &mut dyn FnMut()) {
        crate::checkpoint::helper_io().blocking(f)
    }

    fn pause(&self) {
        crate::checkpoint::helper_io().pause()
    }
}

impl Transport for ProcessTransport {
    fn me(&self) -> usize {
        self.comm.rank() as usize
    }

    fn processes(&self) -> usize {
        self.comm.size() as usize
    }

    fn send(&self, to: usize, tag: u32, data: &[u8]) -> std::io::Result<()> {
        self.comm
            .send(data, to as i32, tag_of(tag)?)
            .map_err(io_error)
    }

    fn receive(&self, from: usize, tag: u32) -> std::io::Result<Vec<u8>> {
        self.comm
            .recv_vec::<u8>(from as i32, tag_of(tag)?)
            .map(|(v, _)| v)
            .map_err(io_error)
    }

    fn receive_into(&self, from: usize, tag: u32, buf: &mut [u8]) -> std::io::Result<usize> {
        self.comm
            .recv(buf, from as i32, tag_of(tag)?)
            .map(|st| st.bytes)
            .map_err(io_error)
    }
}

impl Communicator {
    /// The endpoint of the caller's process among the job's processes, for
    /// storage levels (partner copies, parity groups): member `p` is process
    /// `p`. Any thread of the process may use it, one receiver per (sender, tag)
    /// at a time.
    pub fn process_transport(&self) -> ProcessTransport {
        ProcessTransport::of_job(self)
    }
}
