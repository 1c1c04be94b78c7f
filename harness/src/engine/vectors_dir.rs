//! Where `conform` finds its `vectors/` directory (requirement catalogues, schemas, golden
//! vectors): the same answer wherever the binary runs, and an error saying where it looked.
//!
//! The lookup, first match wins:
//! 1. `--vectors DIR` (taken as given);
//! 2. `$CONFORM_VECTORS` when set and not empty (taken as given);
//! 3. `./vectors`, when it holds `requirements/` (running from a clone);
//! 4. `vectors/` beside the executable, then `<exe dir>/../share/conform/vectors` (an
//!    installed binary: `cargo install` puts it in `~/.cargo/bin/`, so the second is
//!    `~/.cargo/share/conform/vectors`); the executable's path is the resolved one (a
//!    symbolic link to it does not count, a hard link does);
//! 5. the source tree the binary was built from (`<harness>/../vectors`), when it still exists
//!    and the binary still sits in cargo's target directory (`cargo run`, `cargo test`,
//!    `target/debug/conform`) — an installed or copied binary never reads a clone it may
//!    have outlived.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The environment variable naming the vectors directory.
pub const ENV: &str = "CONFORM_VECTORS";

/// The source tree's `vectors/` directory at build time.
fn source_tree() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("vectors")
}

/// What the lookup starts from (the process's own values in [`Lookup::current`]; a test
/// builds one by hand).
#[derive(Debug, Clone, Default)]
pub struct Lookup {
    /// `--vectors DIR`.
    pub explicit: Option<PathBuf>,
    /// `$CONFORM_VECTORS`.
    pub env: Option<PathBuf>,
    /// The working directory (`None`: the process's, and `./vectors` stays relative).
    pub cwd: Option<PathBuf>,
    /// The running executable.
    pub exe: Option<PathBuf>,
    /// The build-time source tree's `vectors/`.
    pub source: Option<PathBuf>,
}

/// No vectors directory was found (exit code 2): every place tried, and why it did not do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", render(.tried, .install.as_deref()))]
pub struct NotFound {
    /// `(place, what was found there)`, in lookup order.
    pub tried: Vec<(String, String)>,
    /// Where an installed binary looks (`<exe dir>/../share/conform/vectors`), if known.
    pub install: Option<PathBuf>,
}

fn render(tried: &[(String, String)], install: Option<&Path>) -> String {
    let mut s = String::from(
        "no vectors directory found: conform needs the repository's `vectors/` directory \
         (requirement catalogues, schemas, vectors). Looked in, in order:",
    );
    for (place, why) in tried {
        let _ = write!(s, "\n  - {place}: {why}");
    }
    s.push_str(
        "\nFix: run from a clone of the repository (its ./vectors), pass --vectors DIR, or \
         set CONFORM_VECTORS=DIR",
    );
    match install {
        Some(p) => {
            let _ = write!(s, ", or copy the repository's vectors/ to {}", p.display());
        }
        None => s.push_str(", or copy the repository's vectors/ beside the executable"),
    }
    s
}

/// Whether `dir` is a vectors directory (it holds `requirements/`).
fn holds_catalogues(dir: &Path) -> bool {
    dir.join("requirements").is_dir()
}

/// Why `dir` is not a vectors directory, for the error.
fn why_not(dir: &Path) -> String {
    if dir.is_dir() {
        format!("{} has no requirements/", dir.display())
    } else {
        format!("{} does not exist", dir.display())
    }
}

/// Whether `exe` sits in a cargo target directory (`<target>/<profile>/conform`, or a test
/// binary in `<target>/<profile>/deps/`): that profile directory holds `.fingerprint/`.
fn in_cargo_target_dir(exe: &Path) -> bool {
    exe.ancestors()
        .skip(1)
        .take(2)
        .any(|d| d.join(".fingerprint").is_dir())
}

impl Lookup {
    /// The lookup of this process: `explicit` (`--vectors`), `$CONFORM_VECTORS`, the working
    /// directory, the executable, the build-time source tree.
    pub fn current(explicit: Option<&Path>) -> Self {
        Self {
            explicit: explicit.map(Path::to_path_buf),
            env: std::env::var_os(ENV)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            cwd: None,
            exe: std::env::current_exe().ok(),
            source: Some(source_tree()),
        }
    }

    /// The vectors directory, or every place tried (module doc for the order).
    pub fn locate(&self) -> Result<PathBuf, NotFound> {
        if let Some(d) = &self.explicit {
            return Ok(d.clone());
        }
        if let Some(d) = &self.env {
            return Ok(d.clone());
        }
        let mut tried = vec![
            ("--vectors DIR".to_string(), "not given".to_string()),
            (format!("${ENV}"), "not set".to_string()),
        ];
        // `./vectors` stays relative (messages and reports name it as the user would); the
        // error names it in full.
        let local =
            (self.cwd.as_ref()).map_or_else(|| PathBuf::from("vectors"), |c| c.join("vectors"));
        if holds_catalogues(&local) {
            return Ok(local);
        }
        let shown = std::path::absolute(&local).unwrap_or_else(|_| local.clone());
        tried.push(("./vectors".into(), why_not(&shown)));
        let mut install = None;
        match self.exe.as_deref().and_then(Path::parent) {
            Some(dir) => {
                let beside = dir.join("vectors");
                if holds_catalogues(&beside) {
                    return Ok(beside);
                }
                tried.push(("beside the executable".into(), why_not(&beside)));
                let prefix = dir
                    .parent()
                    .map_or_else(|| dir.join(".."), Path::to_path_buf);
                let share = prefix.join("share").join("conform").join("vectors");
                if holds_catalogues(&share) {
                    return Ok(share);
                }
                tried.push((
                    "the installation's share/ directory".into(),
                    why_not(&share),
                ));
                install = Some(share);
            }
            None => tried.push((
                "beside the executable".into(),
                "the executable's path is unknown".into(),
            )),
        }
        if let Some(src) = &self.source {
            let in_target = self.exe.as_deref().is_some_and(in_cargo_target_dir);
            if in_target && holds_catalogues(src) {
                return Ok(src.clone());
            }
            let why = if in_target {
                why_not(src)
            } else {
                format!(
                    "{} not used: the executable is not in cargo's target directory (an \
                     installed or copied binary)",
                    src.display()
                )
            };
            tried.push(("the source tree it was built from".into(), why));
        }
        Err(NotFound { tried, install })
    }
}

/// The vectors directory of this process ([`Lookup::current`]); `explicit` is `--vectors`.
pub fn locate(explicit: Option<&Path>) -> Result<PathBuf, NotFound> {
    Lookup::current(explicit).locate()
}

/// [`locate`] without `--vectors`, else the build-time source tree's path (for tests, benches
/// and tools built in the workspace, which always have it).
pub fn default_vectors_dir() -> PathBuf {
    locate(None).unwrap_or_else(|_| source_tree())
}

#[cfg(test)]
#[expect(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    fn vectors_in(dir: &Path) -> PathBuf {
        let v = dir.join("vectors");
        std::fs::create_dir_all(v.join("requirements")).unwrap();
        v
    }

    #[test]
    fn explicit_then_env_win() {
        let l = Lookup {
            explicit: Some("a".into()),
            env: Some("b".into()),
            ..Lookup::default()
        };
        assert_eq!(l.locate().unwrap(), PathBuf::from("a"));
        let l = Lookup {
            env: Some("b".into()),
            ..Lookup::default()
        };
        assert_eq!(l.locate().unwrap(), PathBuf::from("b"));
    }

    #[test]
    fn beside_the_executable_then_share() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let share = vectors_in(&tmp.path().join("share/conform"));
        let l = Lookup {
            exe: Some(bin.join("conform")),
            source: Some(tmp.path().join("nowhere")),
            ..Lookup::default()
        };
        assert_eq!(
            l.locate().unwrap().canonicalize().unwrap(),
            share.canonicalize().unwrap()
        );
        let beside = vectors_in(&bin);
        assert_eq!(l.locate().unwrap(), beside);
    }

    #[test]
    fn source_tree_only_for_a_binary_in_cargo_target_dir() {
        let tmp = tempfile::tempdir().unwrap();
        let src = vectors_in(&tmp.path().join("src"));
        let installed = tmp.path().join("bin");
        std::fs::create_dir_all(&installed).unwrap();
        let l = Lookup {
            exe: Some(installed.join("conform")),
            source: Some(src.clone()),
            ..Lookup::default()
        };
        let err = l.locate().unwrap_err().to_string();
        assert!(err.contains("not in cargo's target directory"), "{err}");
        let profile = tmp.path().join("target/debug");
        std::fs::create_dir_all(profile.join(".fingerprint")).unwrap();
        for exe in [profile.join("conform"), profile.join("deps/conform-0123")] {
            let l = Lookup {
                exe: Some(exe),
                ..l.clone()
            };
            assert_eq!(l.locate().unwrap(), src);
        }
    }

    #[test]
    fn nothing_found_says_where_it_looked_and_how_to_fix_it() {
        let tmp = tempfile::tempdir().unwrap();
        let l = Lookup {
            cwd: Some(tmp.path().to_path_buf()),
            exe: Some(tmp.path().join("bin/conform")),
            source: Some(tmp.path().join("gone/vectors")),
            ..Lookup::default()
        };
        let err = l.locate().unwrap_err().to_string();
        for part in [
            "no vectors directory found",
            "--vectors DIR: not given",
            "$CONFORM_VECTORS: not set",
            "beside the executable",
            "share/conform/vectors",
            "gone/vectors",
            "Fix: ",
        ] {
            assert!(err.contains(part), "{part:?} in:\n{err}");
        }
    }
}
