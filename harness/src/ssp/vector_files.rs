//! Loading a directory of typed vector files (the SSP request and sequence vectors): every
//! `*.json` in name order, each parsed into its closed type, its header and every item
//! checked (requirement IDs against the catalogue), ids unique across the directory. A
//! directory that does not exist holds none.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::engine::requirements::Catalogue;
use crate::ssp::vectors::VectorError;

/// What a vector file holds, for [`load`].
pub trait VectorFile: DeserializeOwned {
    /// One item.
    type Item;
    /// Its header's problem (`format_version`, `suite`), if any.
    fn header_problem(&self) -> Option<String>;
    /// Its items.
    fn items(self) -> Vec<Self::Item>;
    /// An item's id.
    fn id(item: &Self::Item) -> &str;
    /// The requirement IDs an item cites.
    fn requirements(item: &Self::Item) -> &[String];
    /// An item's problem, if any.
    fn problem(item: &Self::Item) -> Option<String>;
}

/// Every item of the `F` files of `dir`, with the file it came from; each item cites only
/// IDs of `catalogue`.
pub fn load<F: VectorFile>(
    dir: &Path,
    catalogue: &Catalogue,
) -> Result<Vec<(PathBuf, F::Item)>, VectorError> {
    let err = |file: &Path, message: String| VectorError {
        file: file.display().to_string(),
        message,
    };
    let mut paths: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => (rd.filter_map(Result::ok).map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(err(dir, e.to_string())),
    };
    paths.sort();
    let mut out = Vec::new();
    let mut ids = BTreeSet::new();
    for p in paths {
        let text = std::fs::read_to_string(&p).map_err(|e| err(&p, e.to_string()))?;
        let file: F = serde_json::from_str(&text).map_err(|e| err(&p, e.to_string()))?;
        if let Some(m) = file.header_problem() {
            return Err(err(&p, m));
        }
        for item in file.items() {
            let id = F::id(&item).to_string();
            let unknown = F::requirements(&item)
                .iter()
                .find(|r| catalogue.get(r).is_none());
            let problem = match unknown {
                Some(r) => Some(format!("cites {r}, which is not in the SSP catalogue")),
                None => F::problem(&item),
            };
            if let Some(m) = problem {
                return Err(err(&p, format!("{id}: {m}")));
            }
            if !ids.insert(id.clone()) {
                return Err(err(&p, format!("duplicate id {id}")));
            }
            out.push((p.clone(), item));
        }
    }
    Ok(out)
}
