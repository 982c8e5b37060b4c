//! The network configuration (config/rails.xml, MPC's format): driver configs,
//! rails and the command-line options that pick an ordered set of rails.
//! Everything is checked when the file is read, before any process starts; an
//! error names the file, line and column and what is wrong.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::gate::Gate;
use crate::xml::{self, Element, Pos};
use mpcrs_settings::parse_size;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    Tcp,
    Shm,
    Ibverbs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topology {
    /// Connected at start-up to the neighbours in process order.
    Ring,
    /// No static connection: endpoints on demand only.
    None,
    /// Every process connected to every other at start-up.
    Fully,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Rail {
    pub name: String,
    pub priority: i32,
    pub topology: Topology,
    pub driver: Driver,
    pub config: String,
    pub ondemand: bool,
    pub gates: Vec<Gate>,
}

/// The rails of one `<cli_option>`, highest priority first.
#[derive(Debug, Clone, PartialEq)]
pub struct RailSet {
    pub option: String,
    pub rails: Vec<Rail>,
}

#[derive(Debug, Clone)]
pub struct NetConfig {
    pub file: PathBuf,
    configs: BTreeMap<String, Driver>,
    rails: BTreeMap<String, (Rail, Pos)>,
    options: BTreeMap<String, (Vec<(String, Pos)>, Pos)>,
}

/// A configuration error: where, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    pub file: PathBuf,
    pub pos: Option<Pos>,
    pub reason: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pos {
            Some(p) => write!(
                f,
                "{}:{}:{}: {}",
                self.file.display(),
                p.line,
                p.column,
                self.reason
            ),
            None => write!(f, "{}: {}", self.file.display(), self.reason),
        }
    }
}

/// The name of the `<cli_option>` used when none is given.
pub const DEFAULT_OPTION: &str = "default";

impl NetConfig {
    pub fn load(path: &Path) -> Result<NetConfig, ConfigError> {
        let text = mpcrs_settings::files::read_config_text(path).map_err(|e| ConfigError {
            file: path.to_path_buf(),
            pos: None,
            reason: format!("cannot read: {e}"),
        })?;
        NetConfig::parse(path, &text)
    }

    pub fn parse(file: &Path, text: &str) -> Result<NetConfig, ConfigError> {
        let err = |pos: Pos, reason: String| ConfigError {
            file: file.to_path_buf(),
            pos: Some(pos),
            reason,
        };
        let root = xml::parse(text).map_err(|(pos, reason)| err(pos, reason))?;
        let networks = root
            .child("networks")
            .ok_or_else(|| err(root.pos, format!("<{}> has no <networks>", root.name)))?;
        let text_of = |el: &Element, what: &str| -> Result<String, ConfigError> {
            let t = el
                .child(what)
                .ok_or_else(|| err(el.pos, format!("<{}> needs a <{what}>", el.name)))?;
            if t.text.is_empty() {
                return Err(err(t.pos, format!("<{what}> is empty")));
            }
            Ok(t.text.clone())
        };

        let mut configs = BTreeMap::new();
        for c in networks
            .child("configs")
            .into_iter()
            .flat_map(|c| c.children_named("config"))
        {
            let name = text_of(c, "name")?;
            let drv = c
                .child("driver")
                .ok_or_else(|| err(c.pos, format!("config {name:?} needs a <driver>")))?;
            let kind = drv.children.first().ok_or_else(|| {
                err(
                    drv.pos,
                    "<driver> names no driver (tcp, shm or ibverbs)".into(),
                )
            })?;
            let driver = match kind.name.as_str() {
                "tcp" => Driver::Tcp,
                "shm" => Driver::Shm,
                "ibverbs" => Driver::Ibverbs,
                other => {
                    return Err(err(
                        kind.pos,
                        format!("unknown driver <{other}> (tcp, shm or ibverbs)"),
                    ))
                }
            };
            if configs.insert(name.clone(), driver).is_some() {
                return Err(err(c.pos, format!("config {name:?} is defined twice")));
            }
        }

        let mut rails = BTreeMap::new();
        for r in networks
            .child("rails")
            .into_iter()
            .flat_map(|r| r.children_named("rail"))
        {
            let name = text_of(r, "name")?;
            let config = text_of(r, "config")?;
            let driver = *configs.get(&config).ok_or_else(|| {
                err(
                    r.child("config").map_or(r.pos, |c| c.pos),
                    format!("rail {name:?} names config {config:?}, which is not defined"),
                )
            })?;
            let priority = match r.child("priority") {
                Some(p) => p
                    .text
                    .parse::<i32>()
                    .map_err(|_| err(p.pos, format!("priority {:?} is not an integer", p.text)))?,
                None => 0,
            };
            let topology = match r.child("topology") {
                None => Topology::None,
                Some(t) => match t.text.as_str() {
                    "ring" => Topology::Ring,
                    "none" => Topology::None,
                    "fully" => Topology::Fully,
                    other => {
                        return Err(err(
                            t.pos,
                            format!("unknown topology {other:?} (ring, none or fully)"),
                        ))
                    }
                },
            };
            let ondemand = match r.child("ondemand") {
                None => true,
                Some(o) => parse_bool(&o.text).ok_or_else(|| {
                    err(o.pos, format!("ondemand {:?} is not true or false", o.text))
                })?,
            };
            let mut gates = Vec::new();
            for g in r
                .child("gates")
                .into_iter()
                .flat_map(|g| g.children_named("gate"))
            {
                for spec in &g.children {
                    gates.push(gate(spec).map_err(|(pos, reason)| err(pos, reason))?);
                }
            }
            let rail = Rail {
                name: name.clone(),
                priority,
                topology,
                driver,
                config,
                ondemand,
                gates,
            };
            if rails.insert(name.clone(), (rail, r.pos)).is_some() {
                return Err(err(r.pos, format!("rail {name:?} is defined twice")));
            }
        }

        let mut options = BTreeMap::new();
        for o in networks
            .child("cli_options")
            .into_iter()
            .flat_map(|o| o.children_named("cli_option"))
        {
            let name = text_of(o, "name")?;
            let list = o
                .child("rails")
                .ok_or_else(|| err(o.pos, format!("cli_option {name:?} needs <rails>")))?;
            let mut names = Vec::new();
            for r in list.children_named("rail") {
                if !rails.contains_key(&r.text) {
                    return Err(err(
                        r.pos,
                        format!(
                            "cli_option {name:?} uses rail {:?}, which is not defined",
                            r.text
                        ),
                    ));
                }
                names.push((r.text.clone(), r.pos));
            }
            if names.is_empty() {
                return Err(err(list.pos, format!("cli_option {name:?} lists no rail")));
            }
            // Start-up needs a ring: it carries the signaling network.
            if !names
                .iter()
                .any(|(n, _)| rails[n].0.topology == Topology::Ring)
            {
                return Err(err(o.pos, format!("cli_option {name:?} has no rail with topology ring (the signaling network needs one)")));
            }
            if options.insert(name.clone(), (names, o.pos)).is_some() {
                return Err(err(o.pos, format!("cli_option {name:?} is defined twice")));
            }
        }
        if options.is_empty() {
            return Err(err(networks.pos, "no <cli_option> is defined".into()));
        }
        Ok(NetConfig {
            file: file.to_path_buf(),
            configs,
            rails,
            options,
        })
    }

    /// Names of the command-line options, for help and error messages.
    pub fn options(&self) -> impl Iterator<Item = &str> {
        self.options.keys().map(|s| s.as_str())
    }

    /// The rails `--net name` selects, highest priority first.
    pub fn select(&self, name: &str) -> Result<RailSet, ConfigError> {
        let (names, _) = self.options.get(name).ok_or_else(|| ConfigError {
            file: self.file.clone(),
            pos: None,
            reason: format!(
                "unknown network option {name:?}; this file defines: {}",
                self.options().collect::<Vec<_>>().join(", ")
            ),
        })?;
        let mut rails: Vec<Rail> = names.iter().map(|(n, _)| self.rails[n].0.clone()).collect();
        // Stable: equal priorities keep the option's order.
        rails.sort_by_key(|r| std::cmp::Reverse(r.priority));
        Ok(RailSet {
            option: name.to_string(),
            rails,
        })
    }

    pub fn driver_of(&self, config: &str) -> Option<Driver> {
        self.configs.get(config).copied()
    }
}

fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "true" | "1" | "yes" => Some(true),
        "false" | "0" | "no" => Some(false),
        _ => None,
    }
}

/// One gate from its element: `<minsize><value>32KB</value></minsize>` etc.
fn gate(spec: &Element) -> Result<Gate, (Pos, String)> {
    let value = |el: &Element| -> Result<String, (Pos, String)> {
        el.child("value")
            .map(|v| v.text.clone())
            .or_else(|| (!el.text.is_empty()).then(|| el.text.clone()))
            .ok_or_else(|| (el.pos, format!("<{}> needs a <value>", el.name)))
    };
    match spec.name.as_str() {
        "minsize" => parse_size(&value(spec)?)
            .map(Gate::MinSize)
            .map_err(|e| (spec.pos, e)),
        "maxsize" => parse_size(&value(spec)?)
            .map(Gate::MaxSize)
            .map_err(|e| (spec.pos, e)),
        "boolean" => {
            let v = value(spec)?;
            parse_bool(&v).map(Gate::Boolean).ok_or((
                spec.pos,
                format!("boolean gate value {v:?} is not true or false"),
            ))
        }
        "probabilistic" => {
            let v = spec
                .child("probability")
                .map(|p| p.text.clone())
                .map_or_else(|| value(spec), Ok)?;
            match v.parse::<u8>() {
                Ok(p) if p <= 100 => Ok(Gate::Probabilistic(p)),
                _ => Err((
                    spec.pos,
                    format!("probability {v:?} is not a percentage (0 to 100)"),
                )),
            }
        }
        "msgtype" => {
            let flag = |n: &str| {
                spec.child(n)
                    .and_then(|e| parse_bool(&e.text))
                    .unwrap_or(false)
            };
            Ok(Gate::MsgType {
                process: flag("process"),
                task: flag("task"),
                common: flag("common"),
            })
        }
        other => Err((
            spec.pos,
            format!("unknown gate <{other}> (minsize, maxsize, boolean, probabilistic, msgtype)"),
        )),
    }
}
