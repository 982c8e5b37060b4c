//! Gates: conditions a message must meet to travel on a rail (seed 002, 5.2.1).

/// What the election knows of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageInfo {
    pub size: u64,
    pub kind: MessageKind,
}

/// MPC's message types: between MPI processes, between tasks, runtime-internal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    Process,
    Task,
    Common,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Gate {
    /// Messages of at least this many bytes.
    MinSize(u64),
    /// Messages of at most this many bytes.
    MaxSize(u64),
    /// Always (true) or never (false).
    Boolean(bool),
    /// A share of the messages, in percent.
    Probabilistic(u8),
    /// Only these kinds of messages.
    MsgType {
        process: bool,
        task: bool,
        common: bool,
    },
}

impl Gate {
    /// Whether the message may pass; `draw` is a uniform number in 0..100 used by
    /// probabilistic gates.
    pub fn accepts(&self, m: &MessageInfo, draw: u8) -> bool {
        match *self {
            Gate::MinSize(n) => m.size >= n,
            Gate::MaxSize(n) => m.size <= n,
            Gate::Boolean(b) => b,
            Gate::Probabilistic(p) => draw < p,
            Gate::MsgType {
                process,
                task,
                common,
            } => match m.kind {
                MessageKind::Process => process,
                MessageKind::Task => task,
                MessageKind::Common => common,
            },
        }
    }
}

/// The sizes a rail's gates let through, given that its other gates (those that
/// do not look at the size) accept the message: `None` if a gate draws (the
/// outcome is not a function of the size).
pub fn size_bounds(gates: &[Gate]) -> Option<(u64, u64)> {
    let mut bounds = (0, u64::MAX);
    for g in gates {
        match *g {
            Gate::MinSize(n) => bounds.0 = bounds.0.max(n),
            Gate::MaxSize(n) => bounds.1 = bounds.1.min(n),
            Gate::Probabilistic(_) => return None,
            Gate::Boolean(_) | Gate::MsgType { .. } => {}
        }
    }
    Some(bounds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gates_filter_messages() {
        let small = MessageInfo {
            size: 100,
            kind: MessageKind::Process,
        };
        let large = MessageInfo {
            size: 64 << 10,
            kind: MessageKind::Common,
        };
        let g = Gate::MinSize(32 << 10);
        assert!(!g.accepts(&small, 0) && g.accepts(&large, 0));
        assert!(Gate::MaxSize(100).accepts(&small, 0));
        assert!(!Gate::Boolean(false).accepts(&small, 0));
        assert!(
            Gate::Probabilistic(30).accepts(&small, 29)
                && !Gate::Probabilistic(30).accepts(&small, 30)
        );
        let only_process = Gate::MsgType {
            process: true,
            task: false,
            common: false,
        };
        assert!(only_process.accepts(&small, 0) && !only_process.accepts(&large, 0));
    }
}
