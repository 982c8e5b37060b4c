//! Endpoint election (seed 002, Fig. 2): each remote process has a list of
//! endpoints sorted by rail priority. A message goes on the highest-priority rail
//! whose gates all accept it and that either has an endpoint to the process or
//! can create one on demand (and reach the process); otherwise there is no route.

use std::ops::RangeInclusive;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::config::{Rail, RailSet};
use crate::gate::{self, Gate, MessageInfo};

/// A connection to one remote process over one rail.
#[derive(Debug, Clone)]
pub struct Endpoint<C> {
    /// Index of the rail in the job's [`RailSet`].
    pub rail: usize,
    pub conn: C,
}

/// What the election decided for a message.
#[derive(Debug, PartialEq, Eq)]
pub enum Election {
    /// Send on the existing endpoint at this index of the process's list.
    Existing(usize),
    /// Create an endpoint on this rail (index in the rail set), then send on it.
    Create(usize),
}

/// No rail can carry the message to the process.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no route to process {process}: no connected endpoint accepts a {size}-byte message and no rail can connect on demand")]
pub struct NoRoute {
    pub process: u32,
    pub size: u64,
}

/// The routes of this process to every other.
pub struct Routes<C> {
    rails: RailSet,
    /// Endpoint lists by process number (a send looks its destination up here).
    endpoints: Vec<Vec<Endpoint<C>>>,
    /// State of the draws of probabilistic gates: read and written without a
    /// locked instruction, so elections share `&self` (concurrent draws may
    /// repeat a number, which a probability does not mind).
    rng: AtomicU64,
}

impl<C: Clone> Clone for Routes<C> {
    fn clone(&self) -> Routes<C> {
        Routes {
            rails: self.rails.clone(),
            endpoints: self.endpoints.clone(),
            rng: AtomicU64::new(self.rng.load(Ordering::Relaxed)),
        }
    }
}

impl<C> Routes<C> {
    pub fn new(rails: RailSet) -> Routes<C> {
        Routes {
            rails,
            endpoints: Vec::new(),
            rng: AtomicU64::new(0x9e37_79b9_7f4a_7c15),
        }
    }

    pub fn rails(&self) -> &RailSet {
        &self.rails
    }

    fn draw(&self) -> u8 {
        let mut x = self.rng.load(Ordering::Relaxed);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng.store(x, Ordering::Relaxed);
        (x % 100) as u8
    }

    fn accepts(&self, rail: usize, m: &MessageInfo) -> bool {
        let gates = &self.rails.rails[rail].gates;
        // Drawn only for a rail with a probabilistic gate.
        let draw = if gates.iter().any(|g| matches!(g, Gate::Probabilistic(_))) {
            self.draw()
        } else {
            0
        };
        gates.iter().all(|g| g.accepts(m, draw))
    }

    /// Chooses how to send `m` to `process`; `reachable` says whether a rail (its
    /// index in the set, and the rail) can connect to it at all (shared memory
    /// only within a node). Rails
    /// are walked by priority: the first whose gates accept the message wins, with
    /// its existing endpoint, or with a new one if it connects on demand. So a
    /// higher-priority rail gets its endpoint the first time a message wants it,
    /// even while a lower one (the ring) could carry the message.
    pub fn elect(
        &self,
        process: u32,
        m: &MessageInfo,
        reachable: impl Fn(usize, &Rail) -> bool,
    ) -> Result<Election, NoRoute> {
        self.elect_alike(process, m, reachable).map(|(e, _)| e)
    }

    /// [`Routes::elect`], and the sizes for which messages of the same kind to
    /// the same process are elected alike while this table is unchanged: its
    /// rail's gates let them through, and every rail before it that could carry
    /// them turns them away by size. `None` where a probabilistic gate draws on
    /// the way.
    pub fn elect_alike(
        &self,
        process: u32,
        m: &MessageInfo,
        reachable: impl Fn(usize, &Rail) -> bool,
    ) -> Result<(Election, Option<RangeInclusive<u64>>), NoRoute> {
        let mut alike = Some((0u64, u64::MAX));
        for (r, rail) in self.rails.rails.iter().enumerate() {
            let existing = self.endpoints(process).iter().position(|e| e.rail == r);
            let usable = existing.is_some() || (rail.ondemand && reachable(r, rail));
            if !usable {
                continue;
            }
            let accepted = self.accepts(r, m);
            let bounds = gate::size_bounds(&rail.gates);
            let by_size = |bounds: (u64, u64)| {
                let other = MessageInfo {
                    size: bounds.0,
                    ..*m
                };
                bounds.0 <= bounds.1 && self.accepts(r, &other)
            };
            match (alike, bounds) {
                (Some((lo, hi)), Some((min, max))) if accepted => {
                    alike = Some((lo.max(min), hi.min(max)));
                }
                // Turned away whatever the size: no bound.
                (Some(_), Some(b)) if !by_size(b) => {}
                (Some((lo, hi)), Some((min, max))) => {
                    alike = Some(if max < m.size {
                        (lo.max(max + 1), hi)
                    } else {
                        (lo, hi.min(min - 1))
                    });
                }
                _ => alike = None,
            }
            if !accepted {
                continue;
            }
            let e = match existing {
                Some(i) => Election::Existing(i),
                None => Election::Create(r),
            };
            return Ok((e, alike.map(|(lo, hi)| lo..=hi)));
        }
        Err(NoRoute {
            process,
            size: m.size,
        })
    }

    /// Adds an endpoint, keeping the process's list in rail priority order.
    pub fn add(&mut self, process: u32, rail: usize, conn: C) {
        let p = process as usize;
        if self.endpoints.len() <= p {
            self.endpoints.resize_with(p + 1, Vec::new);
        }
        let list = &mut self.endpoints[p];
        // Rails are sorted by priority in the set: lower index, higher priority.
        let at = list
            .iter()
            .position(|e| e.rail > rail)
            .unwrap_or(list.len());
        list.insert(at, Endpoint { rail, conn });
    }

    pub fn endpoints(&self, process: u32) -> &[Endpoint<C>] {
        self.endpoints
            .get(process as usize)
            .map_or(&[], |l| l.as_slice())
    }

    pub fn endpoint_mut(&mut self, process: u32, index: usize) -> Option<&mut Endpoint<C>> {
        self.endpoints.get_mut(process as usize)?.get_mut(index)
    }

    /// Removes every endpoint of the rails `which` selects (closing high-speed
    /// rails at a checkpoint); returns them so the caller can close them.
    pub fn remove_rails(&mut self, which: impl Fn(&Rail) -> bool) -> Vec<(u32, Endpoint<C>)> {
        let mut out = Vec::new();
        for (p, list) in self.endpoints.iter_mut().enumerate() {
            let p = p as u32;
            let mut i = 0;
            while i < list.len() {
                if which(&self.rails.rails[list[i].rail]) {
                    out.push((p, list.remove(i)));
                } else {
                    i += 1;
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Driver, NetConfig};
    use crate::gate::MessageKind;

    fn routes(option: &str) -> Routes<&'static str> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config/rails.xml");
        let cfg = NetConfig::load(&path).unwrap();
        Routes::new(cfg.select(option).unwrap())
    }

    fn msg(size: u64) -> MessageInfo {
        MessageInfo {
            size,
            kind: MessageKind::Process,
        }
    }

    #[test]
    fn multirail_tcp_sends_large_messages_on_tcp_large() {
        let mut r = routes("multirail_tcp");
        assert_eq!(r.rails().rails[0].name, "tcp_large");
        // At start only the ring endpoint exists.
        r.add(3, 1, "ring");
        assert_eq!(
            r.elect(3, &msg(100), |_, _| true),
            Ok(Election::Existing(0))
        );
        // A large message wants tcp_large, which has no endpoint yet: create one.
        assert_eq!(
            r.elect(3, &msg(64 << 10), |_, _| true),
            Ok(Election::Create(0))
        );
        // Were tcp_large unable to connect, the ring would carry it.
        assert_eq!(
            r.elect(3, &msg(64 << 10), |_, rail| rail.name != "tcp_large"),
            Ok(Election::Existing(0))
        );
        r.add(3, 0, "large");
        assert_eq!(r.endpoints(3)[0].conn, "large");
        assert_eq!(
            r.elect(3, &msg(64 << 10), |_, _| true),
            Ok(Election::Existing(0))
        );
        assert_eq!(
            r.elect(3, &msg(100), |_, _| true),
            Ok(Election::Existing(1))
        );
    }

    #[test]
    fn on_demand_creation_respects_reachability_and_reports_no_route() {
        let r = routes("default");
        assert_eq!(r.rails().rails[0].name, "shm_mpi");
        // A process on another node: shared memory cannot reach it.
        let remote = |_: usize, rail: &Rail| rail.driver != Driver::Shm;
        assert_eq!(r.elect(5, &msg(10), remote), Ok(Election::Create(1)));
        assert_eq!(r.elect(5, &msg(10), |_, _| true), Ok(Election::Create(0)));
        let err = r.elect(5, &msg(10), |_, _| false).unwrap_err();
        assert_eq!(err.to_string(), "no route to process 5: no connected endpoint accepts a 10-byte message and no rail can connect on demand");
    }

    #[test]
    fn closing_high_speed_rails_keeps_tcp() {
        let mut r = routes("default");
        r.add(1, 1, "tcp");
        r.add(1, 0, "shm");
        assert_eq!(
            r.endpoints(1).iter().map(|e| e.conn).collect::<Vec<_>>(),
            ["shm", "tcp"]
        );
        let closed = r.remove_rails(|rail| rail.driver == Driver::Shm);
        assert_eq!(closed.len(), 1);
        assert_eq!(
            r.endpoints(1).iter().map(|e| e.conn).collect::<Vec<_>>(),
            ["tcp"]
        );
    }

    /// Three tcp rails by priority: small (at most 1 KB), large (at least
    /// 64 KB), ring; and a fourth variant whose first rail draws.
    fn gated(first_gate: &str) -> Routes<&'static str> {
        let text = format!(
            r#"<mpcrs><networks>
  <configs><config><name>t</name><driver><tcp/></driver></config></configs>
  <rails>
    <rail><name>small</name><priority>30</priority><topology>none</topology><config>t</config>
      <gates><gate>{first_gate}</gate></gates></rail>
    <rail><name>large</name><priority>20</priority><topology>none</topology><config>t</config>
      <gates><gate><minsize><value>64KB</value></minsize></gate></gates></rail>
    <rail><name>ring</name><priority>1</priority><topology>ring</topology><config>t</config></rail>
  </rails>
  <cli_options><cli_option><name>x</name>
    <rails><rail>small</rail><rail>large</rail><rail>ring</rail></rails></cli_option></cli_options>
</networks></mpcrs>"#
        );
        let cfg = NetConfig::parse(std::path::Path::new("test.xml"), &text).unwrap();
        let mut r = Routes::new(cfg.select("x").unwrap());
        for rail in 0..3 {
            r.add(2, rail, ["small", "large", "ring"][rail]);
        }
        r
    }

    #[test]
    fn sizes_elected_alike_are_those_between_the_gates_of_the_rails_before() {
        let r = gated("<maxsize><value>1KB</value></maxsize>");
        let alike = |size| r.elect_alike(2, &msg(size), |_, _| true).unwrap();
        assert_eq!(alike(8), (Election::Existing(0), Some(0..=1024)));
        assert_eq!(
            alike(4096),
            (Election::Existing(2), Some(1025..=(64 << 10) - 1))
        );
        assert_eq!(
            alike(1 << 20),
            (Election::Existing(1), Some((64 << 10)..=u64::MAX))
        );
        // Every size of a span is elected as the span says.
        for size in [0, 1024, 1025, 5000, (64 << 10) - 1, 64 << 10, 1 << 30] {
            let (e, span) = alike(size);
            let span = span.unwrap();
            for other in [
                *span.start(),
                *span.end(),
                (span.start() / 2 + span.end() / 2),
            ] {
                assert_eq!(
                    r.elect(2, &msg(other), |_, _| true).unwrap(),
                    e,
                    "size {other}"
                );
            }
        }
        // A rail turned away whatever the size bounds nothing.
        let r = gated("<boolean>false</boolean>");
        let all = r.elect_alike(2, &msg(8), |_, _| true).unwrap();
        assert_eq!(all, (Election::Existing(2), Some(0..=(64 << 10) - 1)));
    }

    #[test]
    fn nothing_is_elected_alike_past_a_drawing_gate() {
        let r = gated("<probabilistic><value>50</value></probabilistic>");
        let mut rails = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let (e, span) = r.elect_alike(2, &msg(8), |_, _| true).unwrap();
            assert_eq!(span, None);
            rails.insert(match e {
                Election::Existing(i) => i,
                Election::Create(i) => i,
            });
        }
        assert_eq!(
            rails.into_iter().collect::<Vec<_>>(),
            [0, 2],
            "both ways drawn"
        );
        // A large message meets the drawing rail first too (no size gate turns
        // it away there): its election is a draw as well.
        let (_, span) = r.elect_alike(2, &msg(1 << 20), |_, _| true).unwrap();
        assert_eq!(span, None);
    }
}
