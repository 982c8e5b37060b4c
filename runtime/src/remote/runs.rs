//! A new run of the job in a process that survived another's failure
//! (recovery in place, see recovery/): the process joins the new run's network
//! and forgets everything of the old one it held. Its ranks are out of MPI
//! meanwhile (the recovery protocol waits for them), so nothing is in flight
//! from this side.
//!
//! Nothing of the old run reaches the new one: the old network is no longer
//! polled once replaced (every rail and the signaling links deliver from
//! progress rounds of the current network only), its high-speed rings are
//! closed, and its PMI-2 connection is dropped.

use std::sync::atomic::Ordering;

use super::{Fabric, Joining, Net};
use crate::config::JobConfig;

impl Fabric {
    /// Joins run `run` of the job with the variables of `var` (PMI-2 port and
    /// job id of the new run), and starts it afresh: sequence numbers from 0,
    /// no message held, no communicator known.
    pub(crate) fn start_run(
        &self,
        cfg: &JobConfig,
        var: &dyn Fn(&str) -> Option<String>,
        run: u64,
    ) -> Result<(), String> {
        // No progress round and no frame out while the network is replaced.
        // The agents' gate first: deferred answers pass either (see
        // `flush_deferred`), so none slips out between the two.
        self.progress_gate.close();
        self.agent_gate.close();
        self.send_gate.close();
        let old = self.net();
        old.links.close_high_speed();
        // Its launcher thread sees the connection close.
        drop(old.kvs.lock().unwrap().take());
        let net = Net::join(&Joining {
            cfg,
            var,
            sched: &self.sched,
        });
        let net = match net {
            Ok(n) => n,
            Err(e) => {
                self.reopen_gates();
                return Err(e);
            }
        };
        for s in self.next_seq.iter() {
            s.store(0, Ordering::Release);
        }
        for r in self.inbound.iter() {
            // A rank that unwound while holding it poisoned nothing we need:
            // the old run's state is dropped whole.
            r.clear_poison();
            *r.lock().unwrap_or_else(|p| p.into_inner()) = Default::default();
        }
        while self.deferred.pop().is_some() {}
        self.sends.clear_poison();
        self.sends.lock().unwrap().clear();
        self.recvs.clear_poison();
        self.recvs.lock().unwrap().clear();
        self.registry.clear();
        self.checkpoint_sent.store(0, Ordering::Release);
        self.control_handled.store(0, Ordering::Release);
        self.checkpoint_inbox.lock().unwrap().clear();
        self.finishing.store(false, Ordering::Release);
        self.replace_net(net);
        self.generation.store(run, Ordering::Release);
        self.net().open_data_path();
        self.reopen_gates();
        Ok(())
    }

    fn reopen_gates(&self) {
        self.agent_gate.open();
        self.send_gate.open();
        self.progress_gate.open();
    }
}
