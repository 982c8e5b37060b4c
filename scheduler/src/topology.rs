//! Machine topology: which CPUs this process may use (its cpuset) and where each one
//! sits (core, package, NUMA node), read with hwloc. Used to place workers and
//! exposed to the runtime for rank placement.
//!
//! NUMA nodes are derived from each core's nodeset: looking NUMA nodes up by object
//! type does not work with hwloc 2.x through hwloc2.

use hwloc2::{ObjectType, TopologyObject};

/// One CPU (hardware thread) and its place in the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuPlace {
    /// OS index of the CPU, as used by sched_setaffinity.
    pub cpu: usize,
    /// Logical index of its core.
    pub core: usize,
    /// Logical index of its package (socket).
    pub package: usize,
    /// OS index of its NUMA node.
    pub numa: usize,
    /// Rank of this CPU among the hardware threads of its core (0 = first).
    pub smt_rank: usize,
}

/// The CPUs available to this process.
#[derive(Debug, Clone)]
pub struct Topology {
    /// Allowed CPUs in OS order.
    pub cpus: Vec<CpuPlace>,
    /// True if hwloc described the machine; false if only the cpuset was known.
    pub from_hwloc: bool,
}

impl Topology {
    /// Reads the cpuset and, where hwloc can load the machine, the topology.
    pub fn detect() -> Topology {
        let allowed: Vec<usize> = core_affinity::get_core_ids()
            .map(|ids| ids.into_iter().map(|c| c.id).collect())
            .unwrap_or_else(|| vec![0]);
        match hwloc_places() {
            Some(all) => {
                let cpus: Vec<CpuPlace> = allowed
                    .iter()
                    .map(|&cpu| {
                        all.iter()
                            .copied()
                            .find(|p| p.cpu == cpu)
                            .unwrap_or(CpuPlace {
                                cpu,
                                core: cpu,
                                package: 0,
                                numa: 0,
                                smt_rank: 0,
                            })
                    })
                    .collect();
                Topology {
                    cpus,
                    from_hwloc: true,
                }
            }
            None => Topology {
                cpus: allowed
                    .into_iter()
                    .map(|cpu| CpuPlace {
                        cpu,
                        core: cpu,
                        package: 0,
                        numa: 0,
                        smt_rank: 0,
                    })
                    .collect(),
                from_hwloc: false,
            },
        }
    }

    /// Distinct NUMA nodes among the allowed CPUs.
    pub fn numa_nodes(&self) -> usize {
        count_distinct(self.cpus.iter().map(|c| c.numa))
    }

    /// Distinct cores among the allowed CPUs.
    pub fn cores(&self) -> usize {
        count_distinct(self.cpus.iter().map(|c| c.core))
    }

    /// Distinct packages among the allowed CPUs.
    pub fn packages(&self) -> usize {
        count_distinct(self.cpus.iter().map(|c| c.package))
    }

    /// CPUs for `n` workers (default: one per allowed CPU): first hardware thread of
    /// every core before any second one, so fewer workers than CPUs spread over cores.
    /// More workers than CPUs share CPUs round-robin.
    pub fn worker_places(&self, n: Option<usize>) -> Vec<CpuPlace> {
        let mut order = self.cpus.clone();
        order.sort_by_key(|p| (p.smt_rank, p.package, p.core, p.cpu));
        let n = n.unwrap_or(order.len()).max(1);
        (0..n).map(|i| order[i % order.len()]).collect()
    }
}

fn count_distinct(it: impl Iterator<Item = usize>) -> usize {
    let mut v: Vec<usize> = it.collect();
    v.sort_unstable();
    v.dedup();
    v.len()
}

fn hwloc_places() -> Option<Vec<CpuPlace>> {
    let topo = hwloc2::Topology::new()?;
    let cores = topo.objects_with_type(&ObjectType::Core).ok()?;
    let mut places = Vec::new();
    for core in cores {
        let numa = core
            .nodeset()
            .map(|ns| ns.first())
            .filter(|&n| n >= 0)
            .unwrap_or(0) as usize;
        let package = ancestor_of_type(core, ObjectType::Package)
            .map(|p| p.logical_index() as usize)
            .unwrap_or(0);
        let Some(cpuset) = core.cpuset() else {
            continue;
        };
        for (smt_rank, cpu) in cpuset.into_iter().enumerate() {
            places.push(CpuPlace {
                cpu: cpu as usize,
                core: core.logical_index() as usize,
                package,
                numa,
                smt_rank,
            });
        }
    }
    if places.is_empty() {
        None
    } else {
        Some(places)
    }
}

fn ancestor_of_type(obj: &TopologyObject, ty: ObjectType) -> Option<&TopologyObject> {
    let mut cur = obj.parent();
    while let Some(o) = cur {
        if o.object_type() == ty {
            return Some(o);
        }
        cur = o.parent();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_every_allowed_cpu() {
        let t = Topology::detect();
        let allowed = core_affinity::get_core_ids().unwrap();
        assert_eq!(t.cpus.len(), allowed.len());
        assert!(t.cores() >= 1 && t.packages() >= 1 && t.numa_nodes() >= 1);
    }

    #[test]
    fn worker_places_spread_over_cores_first() {
        let t = Topology {
            cpus: vec![
                CpuPlace {
                    cpu: 0,
                    core: 0,
                    package: 0,
                    numa: 0,
                    smt_rank: 0,
                },
                CpuPlace {
                    cpu: 1,
                    core: 0,
                    package: 0,
                    numa: 0,
                    smt_rank: 1,
                },
                CpuPlace {
                    cpu: 2,
                    core: 1,
                    package: 0,
                    numa: 0,
                    smt_rank: 0,
                },
                CpuPlace {
                    cpu: 3,
                    core: 1,
                    package: 0,
                    numa: 0,
                    smt_rank: 1,
                },
            ],
            from_hwloc: true,
        };
        let cpus: Vec<usize> = t.worker_places(Some(2)).iter().map(|p| p.cpu).collect();
        assert_eq!(cpus, vec![0, 2]);
        let cpus: Vec<usize> = t.worker_places(Some(5)).iter().map(|p| p.cpu).collect();
        assert_eq!(cpus, vec![0, 2, 1, 3, 0]);
    }
}

/// Where each worker thread may run (`mpcrs-run --bind-to`, as Open MPI's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// Each worker on its own CPU (the default).
    Core,
    /// Each worker on every CPU of its CPU's package.
    Socket,
    /// Wherever the kernel puts it, within the process's cpuset.
    None,
}

impl Binding {
    /// `core`, `socket` or `none`.
    pub fn parse(text: &str) -> Result<Binding, String> {
        match text {
            "core" => Ok(Binding::Core),
            "socket" => Ok(Binding::Socket),
            "none" => Ok(Binding::None),
            other => Err(format!("{other:?} is none of core, socket, none")),
        }
    }

    /// The CPUs a worker placed at `place` may run on, among `cpus` (the
    /// process's); `None`: left as the process's.
    pub fn cpus_of(self, place: &CpuPlace, cpus: &[CpuPlace]) -> Option<Vec<usize>> {
        match self {
            Binding::Core => Some(vec![place.cpu]),
            Binding::Socket => Some(
                cpus.iter()
                    .filter(|c| c.package == place.package)
                    .map(|c| c.cpu)
                    .collect(),
            ),
            Binding::None => None,
        }
    }
}

/// Restricts the calling thread to `cpus`.
pub(crate) fn bind_current_thread(cpus: &[usize]) -> std::io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET writes inside it for
    // indices below CPU_SETSIZE (others are skipped).
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
        // SAFETY: see above.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: the set is a valid cpu_set_t of the size given; 0 is this thread.
    match unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

#[cfg(test)]
mod binding_tests {
    use super::{Binding, CpuPlace};

    fn place(cpu: usize, package: usize) -> CpuPlace {
        CpuPlace {
            cpu,
            core: cpu,
            package,
            numa: package,
            smt_rank: 0,
        }
    }

    #[test]
    fn bindings_give_a_cpu_its_package_or_nothing() {
        let cpus = [place(0, 0), place(1, 0), place(2, 1), place(3, 1)];
        assert_eq!(Binding::Core.cpus_of(&cpus[2], &cpus), Some(vec![2]));
        assert_eq!(Binding::Socket.cpus_of(&cpus[2], &cpus), Some(vec![2, 3]));
        assert_eq!(Binding::None.cpus_of(&cpus[2], &cpus), None);
        assert_eq!(Binding::parse("socket"), Ok(Binding::Socket));
        assert!(Binding::parse("numa").unwrap_err().contains("\"numa\""));
    }
}
