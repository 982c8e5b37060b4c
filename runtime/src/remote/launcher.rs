//! What a process started by another PMI launcher (Slurm's srun, MPICH's
//! hydra) learns from it when it joins the job: mpcrs-run tells its processes
//! their nodes and their reachable address; another launcher does not, so the
//! process reads the node of every process from the launcher's
//! `PMI_process_mapping`, shares its node's name through the key-value store,
//! and finds the address the launcher's host reaches it at.

use std::io;
use std::net::IpAddr;

use mpcrs_pmi::{Client, PmiStream};

use crate::config::Layout;

/// Slurm's variable naming the address of the host srun runs on.
const SRUN_HOST: &str = "SLURM_SRUN_COMM_HOST";
/// Slurm's variable naming the node a task runs on.
const SLURM_NODE: &str = "SLURMD_NODENAME";

/// The address of this host on the network toward the launcher's host (the
/// source address of a route there; nothing is sent), which the other hosts
/// of the job reach too. `None` when the launcher names no host.
pub(crate) fn address_toward_launcher(var: &dyn Fn(&str) -> Option<String>) -> Option<IpAddr> {
    let host: IpAddr = var(SRUN_HOST)?.trim().parse().ok()?;
    let any: IpAddr = match host {
        IpAddr::V4(_) => std::net::Ipv4Addr::UNSPECIFIED.into(),
        IpAddr::V6(_) => std::net::Ipv6Addr::UNSPECIFIED.into(),
    };
    let probe = std::net::UdpSocket::bind((any, 0)).ok()?;
    probe.connect((host, 9)).ok()?;
    Some(probe.local_addr().ok()?.ip())
}

/// The nodes of the job's `count` processes from the launcher's mapping (all
/// on one node if it gives none) and each node's name, shared by the first
/// process of the node (a collective of the job: one fence).
pub(crate) fn learn_layout(
    kvs: &mut Client<PmiStream>,
    me: u32,
    count: u32,
    var: &dyn Fn(&str) -> Option<String>,
) -> io::Result<Layout> {
    let nodes = match kvs.job_attribute("PMI_process_mapping")? {
        Some(text) => mpcrs_pmi::process_mapping(&text, count as usize)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?,
        None => vec![0; count as usize],
    };
    let node_count = nodes.iter().max().map_or(1, |&n| n as usize + 1);
    let key = |node: usize| format!("mpcrs-node-name-{node}");
    let mine = nodes[me as usize];
    if nodes.iter().position(|&n| n == mine) == Some(me as usize) {
        let name = var(SLURM_NODE).unwrap_or_else(mpcrs_settings::local_hostname);
        kvs.put(&key(mine as usize), &name)?;
    }
    kvs.fence()?;
    let mut node_names = Vec::with_capacity(node_count);
    for node in 0..node_count {
        // A node number no process runs on keeps its number as its name.
        node_names.push(
            kvs.get(&key(node))?
                .unwrap_or_else(|| format!("node{node}")),
        );
    }
    Ok(Layout { nodes, node_names })
}
