//! `PMI_process_mapping`, the job attribute in which a PMI launcher (Slurm's
//! srun, MPICH's hydra) says which node every process runs on:
//! `(vector,(start,nodes,per_node),...)`, each block giving `per_node`
//! consecutive processes to each of `nodes` nodes from `start` on. When the
//! blocks cover fewer processes than the job has, they repeat (a cyclic
//! distribution is one block, repeated).

/// The node of every one of `processes` processes, as `text` maps them.
pub fn process_mapping(text: &str, processes: usize) -> Result<Vec<u32>, String> {
    let bad = |why: &str| format!("PMI_process_mapping {text:?}: {why}");
    let inner = text
        .trim()
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .ok_or_else(|| bad("not in parentheses"))?;
    let rest = inner
        .trim()
        .strip_prefix("vector")
        .ok_or_else(|| bad("not a vector"))?;
    let mut blocks = Vec::new();
    for block in rest.split('(').skip(1) {
        let numbers = block
            .split(')')
            .next()
            .ok_or_else(|| bad("a block without its closing parenthesis"))?;
        let n: Vec<u32> = numbers
            .split(',')
            .map(|x| x.trim().parse::<u32>())
            .collect::<Result<_, _>>()
            .map_err(|_| bad(&format!("({numbers}) is not three numbers")))?;
        let [start, nodes, per_node] = n[..] else {
            return Err(bad(&format!("({numbers}) is not three numbers")));
        };
        if nodes == 0 || per_node == 0 {
            return Err(bad(&format!("({numbers}) places no process")));
        }
        blocks.push((start, nodes, per_node));
    }
    if blocks.is_empty() {
        return Err(bad("no block"));
    }
    let mut map = Vec::with_capacity(processes);
    'fill: loop {
        for &(start, nodes, per_node) in &blocks {
            for node in start..start.saturating_add(nodes) {
                for _ in 0..per_node {
                    if map.len() == processes {
                        break 'fill;
                    }
                    map.push(node);
                }
            }
        }
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::process_mapping;

    #[test]
    fn blocks_give_consecutive_processes_to_each_node() {
        assert_eq!(
            process_mapping("(vector,(0,2,3))", 6).unwrap(),
            [0, 0, 0, 1, 1, 1]
        );
        // srun -n 4 on two nodes of 3 and 1 tasks.
        assert_eq!(
            process_mapping("(vector,(0,1,3),(1,1,1))", 4).unwrap(),
            [0, 0, 0, 1]
        );
    }

    #[test]
    fn a_mapping_shorter_than_the_job_repeats() {
        // A cyclic distribution over two nodes.
        assert_eq!(
            process_mapping("(vector,(0,2,1))", 5).unwrap(),
            [0, 1, 0, 1, 0]
        );
    }

    #[test]
    fn malformed_mappings_are_refused_naming_the_text() {
        for bad in [
            "",
            "vector,(0,1,1)",
            "(list,(0,1,1))",
            "(vector)",
            "(vector,(0,1))",
            "(vector,(0,0,1))",
            "(vector,(a,1,1))",
        ] {
            let e = process_mapping(bad, 2).unwrap_err();
            assert!(e.contains(&format!("{bad:?}")), "{e}");
        }
    }
}
