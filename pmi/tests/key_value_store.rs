//! A job's processes exchange entries through the launcher's store: puts,
//! a fence, gets, finalize and abort, over real socket pairs.

use std::os::unix::net::UnixStream;
use std::sync::Arc;

use mpcrs_pmi::{Client, Ending, Server};

#[test]
fn processes_exchange_ring_addresses_through_the_store() {
    let n = 8;
    let server = Arc::new(Server::new(n, "job-7"));
    let mut servers = Vec::new();
    let mut clients = Vec::new();
    for rank in 0..n {
        let (a, b) = UnixStream::pair().unwrap();
        let s = server.clone();
        servers.push(std::thread::spawn(move || {
            let mut b = b;
            s.serve(rank, &mut b).unwrap()
        }));
        clients.push(std::thread::spawn(move || {
            let mut c = Client::init(a, rank, None).unwrap();
            assert_eq!((c.rank, c.size), (rank, n));
            assert_eq!(c.job_id().unwrap(), "job-7");
            c.put(
                &format!("ring-{rank}"),
                &format!("{rank}:node{}:{}", rank % 2, 4000 + rank),
            )
            .unwrap();
            c.fence().unwrap();
            let next = (rank + 1) % n;
            let v = c.get(&format!("ring-{next}")).unwrap();
            assert_eq!(
                v.as_deref(),
                Some(format!("{next}:node{}:{}", next % 2, 4000 + next).as_str())
            );
            assert_eq!(c.get("missing").unwrap(), None);
            if rank == 3 {
                c.abort("giving up; on purpose").unwrap();
            } else {
                c.finalize().unwrap();
            }
        }));
    }
    for c in clients {
        c.join().unwrap();
    }
    let endings: Vec<Ending> = servers.into_iter().map(|s| s.join().unwrap()).collect();
    assert_eq!(endings[3], Ending::Aborted("giving up; on purpose".into()));
    assert!(endings
        .iter()
        .enumerate()
        .all(|(i, e)| i == 3 || *e == Ending::Finalized));
}
