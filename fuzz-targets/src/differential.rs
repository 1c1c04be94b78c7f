//! The differential target (issue 11 item 1): one operation sequence, decoded from the
//! fuzzer's bytes, is played against the reference (spawned in process on a loopback port)
//! and against the harness's Parley model (`conform::parley::model`, written from the notes
//! and the seed, never from the reference), which must agree at every step — outcome,
//! status, reason, and the objects read back (thread, tree, events, inbox).
//!
//! The bytes pick the binding (HTTP or MCP) and then operations by every role of the demo
//! profile, with the model's own generation domains: live-thread and message *picks*
//! (resolved against the model as it goes), deliberately invalid references, boundary
//! bodies. libFuzzer keeps the inputs that reach new code on either side.

use std::sync::{Arc, Mutex};

use arbitrary::Unstructured;
use conform::engine::target::{ConnectOptions, Target};
use conform::parley::model::generate::MAX_THREADS;
use conform::parley::model::party::{EXTENSIONS, Party};
use conform::parley::model::runner::{Cast, InboxBase, cast, play_once};
use conform::parley::model::state::{Body, Kind, Op, St};
use conform::parley::preflight::ParleyTarget;
use conform::parley::protocol::Parley;
use conform::transport::TransportKind;

/// Most operations one input plays.
pub const MAX_OPS: usize = 32;

/// A reference server and the model that judges it.
pub struct Differential {
    runtime: tokio::runtime::Runtime,
    target: Target,
    cast: Cast,
    base: Mutex<InboxBase>,
}

impl Differential {
    /// Spawns the demo reference with the seeded `faults` (none for the fuzz target; the
    /// tests switch some on to show the target bites) and a write quota no campaign
    /// reaches: a 429 would only pause the model, and the fuzzer would explore nothing.
    pub fn spawn(faults: &[&str]) -> Result<Self, String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| format!("runtime: {e}"))?;
        let mut config = reference_impl::Config::demo_in_memory();
        config.faults = faults.iter().map(|f| (*f).to_string()).collect();
        for row in &mut config.tokens {
            if row.quota_per_minute.is_none() {
                row.quota_per_minute = Some(1_000_000);
            }
        }
        let opts = ConnectOptions::default();
        let protocols: Vec<Arc<dyn conform::engine::protocol::Protocol>> = vec![Arc::new(Parley)];
        let target = runtime
            .block_on(conform::reference::spawn_with(config, &opts, &protocols))
            .map_err(|e| format!("reference: {e}"))?;
        let parley = target
            .part::<ParleyTarget>()
            .ok_or("the Parley pre-flight did not run")?;
        let cast = cast(parley)?;
        Ok(Self {
            runtime,
            target,
            cast,
            base: Mutex::new(InboxBase::new()),
        })
    }

    /// Plays the sequence `data` encodes: the number of operations played, or the
    /// disagreement as a numbered transcript citing the broken rules' IDs.
    pub fn run(&self, data: &[u8]) -> Result<usize, String> {
        let world = &self.cast.world;
        let (kind, ops) = decode(data, world.actors.len(), world.body_max.is_some());
        let parley = self
            .target
            .part::<ParleyTarget>()
            .ok_or("the Parley pre-flight did not run")?;
        let mut base = self.base.lock().map_err(|_| "a previous input panicked")?;
        match play_once(
            self.runtime.handle(),
            parley,
            kind,
            &self.cast,
            &mut base,
            &ops,
        ) {
            Ok(steps) => Ok(steps.len()),
            Err(failure) => {
                let (m, steps) = *failure;
                let mut out = format!(
                    "{kind:?}: the reference disagrees with the model at step {} [{}]: {}\n",
                    steps.len(),
                    m.rules.join(", "),
                    m.message
                );
                for (i, s) in steps.iter().enumerate() {
                    out.push_str(&format!("  {:>3}. {}  →  {}\n", i + 1, s.text, s.answer));
                }
                out.push_str(&format!(
                    "  expected: {}\n  observed: {}",
                    m.expected, m.observed
                ));
                Err(out)
            }
        }
    }
}

/// Inputs one reference serves before a fresh one replaces it: its state (threads, the
/// inbox) grows with every input, and a finding should not need thousands of earlier ones
/// to replay.
pub const INPUTS_PER_REFERENCE: usize = 2_000;

/// The fuzz target's body: any bytes as an operation sequence against the fault-free
/// reference; a disagreement with the model panics with its transcript.
pub fn model(data: &[u8]) {
    static SHARED: Mutex<Option<(Differential, usize)>> = Mutex::new(None);
    let mut shared = SHARED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if shared
        .as_ref()
        .is_none_or(|(_, n)| *n >= INPUTS_PER_REFERENCE)
    {
        // Drop the old one first: its runtime and server go with it.
        *shared = None;
        match Differential::spawn(&[]) {
            Ok(d) => *shared = Some((d, 0)),
            Err(e) => panic!("differential set-up: {e}"),
        }
    }
    let Some((d, n)) = shared.as_mut() else {
        return;
    };
    *n += 1;
    if let Err(transcript) = d.run(data) {
        panic!("{transcript}");
    }
}

/// The binding and the generated operations `data` encodes for `actors` actors (picks
/// unresolved; an input that runs out of bytes ends the sequence). Boundary bodies only
/// when the target declares `body_max_chars` (`bodies`), as the model's generation does.
pub fn decode(data: &[u8], actors: usize, bodies: bool) -> (TransportKind, Vec<Op>) {
    let mut u = Unstructured::new(data);
    let kind = if u.arbitrary::<bool>().unwrap_or(false) {
        TransportKind::Mcp
    } else {
        TransportKind::Http
    };
    let mut ops = Vec::new();
    let mut opens = 0;
    while ops.len() < MAX_OPS && !u.is_empty() {
        match op(&mut u, actors.max(1), bodies, &mut opens) {
            Ok(op) => ops.push(op),
            Err(_) => break,
        }
    }
    (kind, ops)
}

/// One operation, with the weights of the model's own generation (`generate.rs`): posts,
/// marks and reopens first, the invalid references rarer.
fn op(u: &mut Unstructured, n: usize, bodies: bool, opens: &mut usize) -> arbitrary::Result<Op> {
    let body = |u: &mut Unstructured| match body(u)? {
        _ if !bodies => Ok(Body::Short),
        b => Ok(b),
    };
    let pick = |u: &mut Unstructured| u.arbitrary::<u32>().map(|x| x as usize);
    Ok(match u.int_in_range(0u8..=31)? {
        0..=3 if *opens < MAX_THREADS => {
            *opens += 1;
            Op::Open {
                by: party(u, n)?,
                body: body(u)?,
            }
        }
        0..=13 => Op::Post {
            thread: pick(u)?,
            parent: match u.int_in_range(0u8..=9)? {
                0..=2 => None,
                3..=5 => Some(u32::MAX as usize), // the last message: deep chains
                _ => Some(pick(u)?),
            },
            // One past the last actor names the thread's creator (`World::resolve`).
            by: party(u, n + 1)?,
            kind: kind(u)?,
            body: body(u)?,
        },
        14..=19 => Op::Mark {
            by: u.int_in_range(0..=n)?,
            thread: pick(u)?,
            state: *u.choose(&St::ALL)?,
        },
        20..=23 => Op::Reopen {
            by: u.int_in_range(0..=n)?,
            thread: pick(u)?,
        },
        24..=25 => Op::ReadThread {
            by: u.int_in_range(0..=n - 1)?,
            thread: pick(u)?,
        },
        26..=27 => Op::ListEvents {
            by: u.int_in_range(0..=n - 1)?,
            thread: pick(u)?,
            since: if u.arbitrary()? { Some(pick(u)?) } else { None },
        },
        28 => Op::ForeignParent {
            by: party(u, n)?,
            thread: pick(u)?,
            other: pick(u)?,
            parent: pick(u)?,
        },
        29 => Op::Orphan {
            by: party(u, n)?,
            kind: match kind(u)? {
                Kind::Ask => Kind::Inform,
                k => k,
            },
        },
        30 => Op::UnknownThread {
            by: party(u, n)?,
            kind: kind(u)?,
        },
        _ => Op::Inbox { by: party(u, n)? },
    })
}

fn party(u: &mut Unstructured, n: usize) -> arbitrary::Result<Party> {
    Ok(Party {
        actor: u.int_in_range(0..=n - 1)?,
        ext: match u.int_in_range(0..=EXTENSIONS.len())? {
            0 => None,
            e => Some(e - 1),
        },
    })
}

fn body(u: &mut Unstructured) -> arbitrary::Result<Body> {
    Ok(match u.int_in_range(0u8..=22)? {
        20 => Body::AtLimit,
        21 => Body::OverLimit,
        22 => Body::Empty,
        _ => Body::Short,
    })
}

fn kind(u: &mut Unstructured) -> arbitrary::Result<Kind> {
    u.choose(&Kind::ALL).copied()
}
