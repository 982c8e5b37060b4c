//! A checkpoint's committed state and the change one commit makes to it.
//!
//! A commit names the indices it sets and, for each array it sets, the
//! array's new length and the blocks that changed, whose bytes follow in one
//! payload. [`Checkpoint::apply`] checks the whole change before it alters
//! anything, so a change is applied entirely or not at all: that is the
//! atomicity of a commit wherever the change is held.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::blocks;

/// The committed state of one rank's checkpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Checkpoint {
    /// The number of the last commit (the first is 1).
    pub commit: u64,
    pub indices: BTreeMap<String, i64>,
    /// Shared so that a flush writes an array while the next commit replaces
    /// it (the writer keeps the old one alive).
    pub arrays: BTreeMap<String, Arc<Vec<u8>>>,
}

/// One array of a [`Change`]: its length after the commit and the blocks
/// that the payload carries, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArrayChange {
    pub name: String,
    pub len: u64,
    pub blocks: Vec<u32>,
}

impl ArrayChange {
    /// The bytes of the payload this array takes.
    pub fn payload_len(&self) -> u64 {
        let len = self.len as usize;
        self.blocks
            .iter()
            .map(|&b| blocks::range(b as usize, len).len() as u64)
            .sum()
    }
}

/// What one commit changes in a checkpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// The commit it makes.
    pub commit: u64,
    pub indices: Vec<(String, i64)>,
    pub arrays: Vec<ArrayChange>,
}

impl Change {
    /// The bytes of the payload that goes with it.
    pub fn payload_len(&self) -> u64 {
        self.arrays.iter().map(ArrayChange::payload_len).sum()
    }
}

impl Checkpoint {
    /// Applies `change`, whose changed blocks are `payload`, or changes
    /// nothing and says why: a commit that does not follow this one, a block
    /// out of its array, a new or resized array not sent whole, a payload of
    /// the wrong length.
    pub fn apply(&mut self, change: &Change, payload: &[u8]) -> Result<(), String> {
        if change.commit <= self.commit {
            return Err(format!(
                "commit {} does not follow commit {}",
                change.commit, self.commit
            ));
        }
        if change.payload_len() != payload.len() as u64 {
            return Err(format!(
                "a payload of {} bytes for a change of {}",
                payload.len(),
                change.payload_len()
            ));
        }
        for a in &change.arrays {
            let len =
                usize::try_from(a.len).map_err(|_| format!("array {:?}: too long", a.name))?;
            let n = blocks::count(len);
            if let Some(b) = a.blocks.iter().find(|&&b| b as usize >= n) {
                return Err(format!("array {:?}: block {b} of {n}", a.name));
            }
            let same_len = self.arrays.get(&a.name).is_some_and(|v| v.len() == len);
            if !same_len && a.blocks.len() != n {
                return Err(format!(
                    "array {:?}: new or resized to {len} bytes, but {} of its {n} blocks sent",
                    a.name,
                    a.blocks.len()
                ));
            }
        }
        let mut at = 0usize;
        for a in &change.arrays {
            let len = a.len as usize;
            let entry = self
                .arrays
                .entry(a.name.clone())
                .or_insert_with(|| Arc::new(Vec::new()));
            let array = Arc::make_mut(entry);
            if array.len() != len {
                // Every block is sent (checked above): no need to keep bytes.
                // Fresh zeroed memory, not a fill: each page is written once.
                *array = vec![0; len];
            }
            for &b in &a.blocks {
                let r = blocks::range(b as usize, len);
                let n = r.len();
                array[r].copy_from_slice(&payload[at..at + n]);
                at += n;
            }
        }
        for (name, v) in &change.indices {
            self.indices.insert(name.clone(), *v);
        }
        self.commit = change.commit;
        Ok(())
    }

    /// [`Checkpoint::apply`] that keeps `payload`'s memory as the first
    /// array of `change` when that array is new here and sent whole, in
    /// order (a restore's fetch): its bytes are then written once, by the
    /// read from the service, instead of twice.
    pub fn apply_owned(&mut self, change: &Change, mut payload: Vec<u8>) -> Result<(), String> {
        let Some(first) = change.arrays.first() else {
            return self.apply(change, &payload);
        };
        let len = first.len as usize;
        let whole = first.blocks.len() == blocks::count(len)
            && first
                .blocks
                .iter()
                .enumerate()
                .all(|(i, &b)| b as usize == i);
        if !whole
            || self.arrays.contains_key(&first.name)
            || change.payload_len() != payload.len() as u64
        {
            return self.apply(change, &payload);
        }
        let rest = Change {
            arrays: change.arrays[1..].to_vec(),
            ..change.clone()
        };
        self.apply(&rest, &payload[len..])?;
        payload.truncate(len);
        self.arrays.insert(first.name.clone(), Arc::new(payload));
        Ok(())
    }

    /// Replaces this checkpoint by what `change` (every array whole) makes
    /// from nothing, reusing the memory of arrays of the same name and
    /// length; or changes nothing and says why.
    pub fn replace(&mut self, change: &Change, payload: &[u8]) -> Result<(), String> {
        // Checked against nothing: every array must be sent whole.
        let mut check = Checkpoint {
            commit: 0,
            indices: BTreeMap::new(),
            arrays: BTreeMap::new(),
        };
        for a in &change.arrays {
            if a.blocks.len() != blocks::count(a.len as usize) {
                return check.apply(change, payload);
            }
        }
        if change.payload_len() != payload.len() as u64 || change.commit == 0 {
            return check.apply(change, payload);
        }
        self.arrays
            .retain(|name, _| change.arrays.iter().any(|a| &a.name == name));
        self.indices.clear();
        self.commit = 0;
        self.apply(change, payload)
    }

    /// The change that makes a copy of this checkpoint from nothing: every
    /// array whole, its payload the arrays in the order of [`Self::arrays`].
    pub fn whole(&self) -> Change {
        Change {
            commit: self.commit,
            indices: self.indices.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            arrays: self
                .arrays
                .iter()
                .map(|(name, v)| ArrayChange {
                    name: name.clone(),
                    len: v.len() as u64,
                    blocks: (0..blocks::count(v.len()) as u32).collect(),
                })
                .collect(),
        }
    }

    /// The arrays, in the order of [`Self::whole`]'s payload.
    pub fn payload(&self) -> Vec<&[u8]> {
        self.arrays.values().map(|a| a.as_slice()).collect()
    }

    /// The bytes its arrays hold.
    pub fn bytes(&self) -> u64 {
        self.arrays.values().map(|a| a.len() as u64).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::BLOCK;

    fn change(commit: u64, name: &str, len: usize, blocks: Vec<u32>) -> Change {
        Change {
            commit,
            indices: vec![("i".into(), commit as i64)],
            arrays: vec![ArrayChange {
                name: name.into(),
                len: len as u64,
                blocks,
            }],
        }
    }

    #[test]
    fn a_change_applies_whole_or_not_at_all() {
        let mut c = Checkpoint::default();
        let data = vec![1u8; 2 * BLOCK + 3];
        c.apply(&change(1, "a", data.len(), vec![0, 1, 2]), &data)
            .unwrap();
        assert_eq!(*c.arrays["a"], data);
        // One block changes.
        c.apply(&change(2, "a", data.len(), vec![1]), &vec![9u8; BLOCK])
            .unwrap();
        assert_eq!(c.arrays["a"][BLOCK], 9);
        assert_eq!(c.arrays["a"][0], 1);
        assert_eq!(c.indices["i"], 2);
        let before = c.clone();
        // A short payload, a block out of range, a resize without every
        // block, an old commit: refused, nothing changed.
        assert!(c
            .apply(&change(3, "a", data.len(), vec![1]), &[0u8; 5])
            .is_err());
        assert!(c
            .apply(&change(3, "a", data.len(), vec![3]), &[0u8; 5])
            .is_err());
        assert!(c.apply(&change(3, "a", 10, vec![]), &[]).is_err());
        assert!(c.apply(&change(2, "a", data.len(), vec![]), &[]).is_err());
        assert!(c.apply(&change(3, "b", 4, vec![]), &[]).is_err());
        assert_eq!(c, before);
    }

    #[test]
    fn an_owned_payload_becomes_the_first_array_and_the_rest_is_copied() {
        let a: Vec<u8> = (0..2 * BLOCK + 5).map(|i| i as u8).collect();
        let mut payload = a.clone();
        payload.extend([7u8; 8]);
        let mut ch = change(3, "a", a.len(), vec![0, 1, 2]);
        ch.arrays.push(ArrayChange {
            name: "b".into(),
            len: 8,
            blocks: vec![0],
        });
        let at = payload.as_ptr();
        let mut owned = Checkpoint::default();
        owned.apply_owned(&ch, payload.clone()).unwrap();
        let mut copied = Checkpoint::default();
        copied.apply(&ch, &payload).unwrap();
        assert_eq!(owned, copied);
        let mut moved = Checkpoint::default();
        moved.apply_owned(&ch, payload).unwrap();
        assert_eq!(
            moved.arrays["a"].as_ptr(),
            at,
            "the payload's memory is kept"
        );
        // What apply refuses, so does it, and changes nothing.
        let before = moved.clone();
        assert!(moved.apply_owned(&ch, vec![0u8; 3]).is_err());
        assert_eq!(moved, before);
        let mut fresh = Checkpoint::default();
        assert!(fresh.apply_owned(&ch, vec![0u8; a.len()]).is_err());
        assert_eq!(fresh, Checkpoint::default());
    }

    #[test]
    fn a_replacement_keeps_only_what_it_sends() {
        let mut c = Checkpoint::default();
        c.apply(&change(4, "a", BLOCK, vec![0]), &vec![3u8; BLOCK])
            .unwrap();
        c.apply(&change(5, "b", 8, vec![0]), &[1u8; 8]).unwrap();
        let before = c.clone();
        assert!(c.replace(&change(2, "a", BLOCK, vec![]), &[]).is_err());
        assert_eq!(c, before);
        c.replace(&change(2, "a", BLOCK, vec![0]), &vec![7u8; BLOCK])
            .unwrap();
        assert_eq!(c.commit, 2);
        assert_eq!(c.arrays.keys().collect::<Vec<_>>(), ["a"]);
        assert_eq!(c.arrays["a"][0], 7);
        assert_eq!(c.indices["i"], 2);
    }

    #[test]
    fn whole_rebuilds_the_checkpoint() {
        let mut c = Checkpoint::default();
        c.apply(
            &change(4, "a", BLOCK + 1, vec![0, 1]),
            &vec![3u8; BLOCK + 1],
        )
        .unwrap();
        let payload: Vec<u8> = c.payload().concat();
        let mut copy = Checkpoint::default();
        copy.apply(&c.whole(), &payload).unwrap();
        assert_eq!(copy, c);
    }
}
