//! The import graph of a crate's source files, read with `syn` (no outside tool): which file
//! names what of which other file, through `use` trees, paths in code, and paths written
//! inside macro calls. `#[cfg(test)]` items are left out: tests may reach any layer.
//!
//! A module's own use of a module it declares (`mod x;` in it: its direct child) is
//! containment, kept apart from the arrows: the child is a part of the parent, and the one
//! loop the layering allows is a parent and its own child using each other (the folder
//! module's shared items in its `mod.rs`). Every other loop is a circle, also one that passes
//! through a containment edge (`p.rs` → its child `p/a.rs` → sibling `p/b.rs` → `p.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// One crate of the graph: its root files (library and binary) and the library's extern name
/// (how a binary root reaches the library: `conform::engine::…`).
pub(crate) struct CrateSpec<'a> {
    /// Directory holding the roots (`harness/src`).
    pub src: &'a Path,
    /// Root files under `src`: `lib.rs`, `main.rs`.
    pub roots: &'a [&'a str],
    /// The library's name as a binary root writes it.
    pub lib_name: &'a str,
}

/// A source file: which root's module tree holds it, and its module path there.
#[derive(Debug, Clone)]
struct Module {
    root: usize,
    path: Vec<String>,
}

/// Files → the files they import, with the names taken (`file -> file: names`).
#[derive(Debug, Default)]
pub(crate) struct Graph {
    /// Every file of the crate (relative to `src`).
    pub files: BTreeSet<PathBuf>,
    /// `from → to → names`.
    pub arrows: BTreeMap<PathBuf, BTreeMap<PathBuf, BTreeSet<String>>>,
    /// `(parent, child)`: a module's use of a module it declares, with the names.
    pub containment: BTreeMap<(PathBuf, PathBuf), BTreeSet<String>>,
}

/// Reads every file reachable from the roots through `mod` declarations.
pub(crate) fn read(spec: &CrateSpec<'_>) -> Result<Graph, String> {
    let mut modules: BTreeMap<PathBuf, Module> = BTreeMap::new();
    let mut parsed: BTreeMap<PathBuf, syn::File> = BTreeMap::new();
    for (root, file) in spec.roots.iter().enumerate() {
        discover(
            spec.src,
            Path::new(file),
            &Module { root, path: vec![] },
            &mut modules,
            &mut parsed,
        )?;
    }
    let lib_root = spec.roots.iter().position(|r| *r == "lib.rs");
    let index: BTreeMap<(usize, Vec<String>), PathBuf> = modules
        .iter()
        .map(|(f, m)| ((m.root, m.path.clone()), f.clone()))
        .collect();
    let mut graph = Graph {
        files: modules.keys().cloned().collect(),
        ..Graph::default()
    };
    for (file, ast) in &parsed {
        let module = &modules[file];
        let mut c = Collector {
            module: module.path.clone(),
            paths: Vec::new(),
        };
        c.visit_file(ast);
        for (from_module, segs) in c.paths {
            let Some((root, abs)) = absolute(
                &from_module,
                module.root,
                &segs,
                spec.lib_name,
                lib_root,
                &index,
            ) else {
                continue;
            };
            let Some((target, rest)) = longest_module(&index, root, &abs) else {
                continue;
            };
            let child = modules.get(&target).is_some_and(|t| {
                t.root == module.root
                    && t.path.len() == module.path.len() + 1
                    && t.path.starts_with(&module.path)
            });
            let name = rest.first().cloned().unwrap_or_else(|| "*".into());
            if child {
                graph
                    .containment
                    .entry((file.clone(), target))
                    .or_default()
                    .insert(name);
            } else if &target != file {
                graph
                    .arrows
                    .entry(file.clone())
                    .or_default()
                    .entry(target)
                    .or_default()
                    .insert(name);
            }
        }
    }
    Ok(graph)
}

/// Parses `file` (relative to `src`), records its module, and follows its `mod x;` lines.
fn discover(
    src: &Path,
    file: &Path,
    module: &Module,
    modules: &mut BTreeMap<PathBuf, Module>,
    parsed: &mut BTreeMap<PathBuf, syn::File>,
) -> Result<(), String> {
    let text =
        std::fs::read_to_string(src.join(file)).map_err(|e| format!("{}: {e}", file.display()))?;
    let ast = syn::parse_file(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    let stem = file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let parent = file.parent().unwrap_or(Path::new(""));
    // A `mod.rs`, `lib.rs` or `main.rs` declares its children beside it; `x.rs` in `x/`.
    let dir = if matches!(stem, "mod" | "lib" | "main") {
        parent.to_path_buf()
    } else {
        parent.join(stem)
    };
    let mut children = Vec::new();
    declared_mods(&ast.items, &dir, &mut Vec::new(), &mut children);
    modules.insert(file.to_path_buf(), module.clone());
    parsed.insert(file.to_path_buf(), ast);
    for (inline, name, dir) in children {
        let candidates = [
            dir.join(format!("{name}.rs")),
            dir.join(&name).join("mod.rs"),
        ];
        let Some(child) = candidates.iter().find(|c| src.join(c).is_file()) else {
            return Err(format!(
                "{}: `mod {name};` names no file under {}",
                file.display(),
                dir.display()
            ));
        };
        let mut path = module.path.clone();
        path.extend(inline);
        path.push(name);
        discover(
            src,
            child,
            &Module {
                root: module.root,
                path,
            },
            modules,
            parsed,
        )?;
    }
    Ok(())
}

/// The `mod x;` declarations of `items` (and of inline modules in them), outside `cfg(test)`:
/// (inline modules on the way, name, directory of its file).
fn declared_mods(
    items: &[syn::Item],
    dir: &Path,
    inline: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, String, PathBuf)>,
) {
    for item in items {
        let syn::Item::Mod(m) = item else { continue };
        if is_test(&m.attrs) {
            continue;
        }
        let name = m.ident.to_string();
        match &m.content {
            None => out.push((inline.clone(), name, dir.to_path_buf())),
            Some((_, inner)) => {
                inline.push(name.clone());
                declared_mods(inner, &dir.join(&name), inline, out);
                inline.pop();
            }
        }
    }
}

/// `#[cfg(test)]` exactly.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta
                .require_list()
                .is_ok_and(|l| l.tokens.to_string().trim() == "test")
    })
}

/// `segs` as written in module `from` of root `root` → (root, absolute module path), or `None`
/// for a path that leaves the crate or names no module (`Foo::new`, `std::…`).
fn absolute(
    from: &[String],
    root: usize,
    segs: &[String],
    lib_name: &str,
    lib_root: Option<usize>,
    index: &BTreeMap<(usize, Vec<String>), PathBuf>,
) -> Option<(usize, Vec<String>)> {
    let first = segs.first()?.as_str();
    match first {
        "crate" => Some((root, segs[1..].to_vec())),
        "self" => Some((root, [from, &segs[1..]].concat())),
        "super" => {
            let ups = segs.iter().take_while(|s| *s == "super").count();
            let base = from.get(..from.len().checked_sub(ups)?)?;
            Some((root, [base, &segs[ups..]].concat()))
        }
        _ if first == lib_name && Some(root) != lib_root => Some((lib_root?, segs[1..].to_vec())),
        // 2018 paths may start with a child module of the current one (`check::Check`).
        _ => {
            let child = [from, &segs[..1]].concat();
            index
                .contains_key(&(root, child))
                .then(|| (root, [from, segs].concat()))
        }
    }
}

/// The file of the longest module prefix of `path`, and what follows it.
fn longest_module(
    index: &BTreeMap<(usize, Vec<String>), PathBuf>,
    root: usize,
    path: &[String],
) -> Option<(PathBuf, Vec<String>)> {
    (0..=path.len()).rev().find_map(|n| {
        index
            .get(&(root, path[..n].to_vec()))
            .map(|f| (f.clone(), path[n..].to_vec()))
    })
}

/// Collects every path of a file that may name a module of the crate, with the module it is
/// written in (inline modules change what `self` and `super` mean).
struct Collector {
    module: Vec<String>,
    paths: Vec<(Vec<String>, Vec<String>)>,
}

impl Collector {
    fn keep(&mut self, segs: Vec<String>) {
        if !segs.is_empty() {
            self.paths.push((self.module.clone(), segs));
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) if n.ident == "self" => self.keep(prefix.clone()),
            syn::UseTree::Name(n) => {
                self.keep([prefix.as_slice(), &[n.ident.to_string()]].concat());
            }
            syn::UseTree::Rename(r) => {
                self.keep([prefix.as_slice(), &[r.ident.to_string()]].concat());
            }
            syn::UseTree::Glob(_) => self.keep(prefix.clone()),
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| self.use_tree(prefix, t)),
        }
    }

    /// `a::b::c` sequences inside a macro's tokens (`format!("{}", crate::x::y())`).
    fn tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            if let TokenTree::Group(g) = &trees[i] {
                self.tokens(g.stream());
            }
            let mut segs = Vec::new();
            let mut j = i;
            while let Some(TokenTree::Ident(id)) = trees.get(j) {
                segs.push(id.to_string());
                match (trees.get(j + 1), trees.get(j + 2)) {
                    (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                        if a.as_char() == ':' && b.as_char() == ':' =>
                    {
                        j += 3;
                    }
                    _ => break,
                }
            }
            if segs.len() > 1 {
                self.keep(segs);
                i = j.max(i + 1);
            } else {
                i += 1;
            }
        }
    }
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !is_test(item_attrs(item)) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if let Some((_, items)) = &m.content {
            self.module.push(m.ident.to_string());
            items.iter().for_each(|i| self.visit_item(i));
            self.module.pop();
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.segments.len() > 1 {
            self.keep(p.segments.iter().map(|s| s.ident.to_string()).collect());
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.tokens(m.tokens.clone());
        syn::visit::visit_macro(self, m);
    }
}

/// The attributes of an item, where its kind has them.
fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item as I;
    match item {
        I::Const(i) => &i.attrs,
        I::Enum(i) => &i.attrs,
        I::ExternCrate(i) => &i.attrs,
        I::Fn(i) => &i.attrs,
        I::ForeignMod(i) => &i.attrs,
        I::Impl(i) => &i.attrs,
        I::Macro(i) => &i.attrs,
        I::Mod(i) => &i.attrs,
        I::Static(i) => &i.attrs,
        I::Struct(i) => &i.attrs,
        I::Trait(i) => &i.attrs,
        I::TraitAlias(i) => &i.attrs,
        I::Type(i) => &i.attrs,
        I::Union(i) => &i.attrs,
        I::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// Every edge of `graph`, arrows and containment: `from → to → names`.
fn edges(graph: &Graph) -> BTreeMap<&PathBuf, BTreeMap<&PathBuf, &BTreeSet<String>>> {
    let mut all: BTreeMap<&PathBuf, BTreeMap<&PathBuf, &BTreeSet<String>>> = BTreeMap::new();
    for (from, tos) in &graph.arrows {
        for (to, names) in tos {
            all.entry(from).or_default().insert(to, names);
        }
    }
    for ((parent, child), names) in &graph.containment {
        all.entry(parent).or_default().insert(child, names);
    }
    all
}

/// The import circles of `graph`: every strongly connected set of two or more files (Tarjan)
/// over arrows and containment, each with the edges inside it — except a set whose every
/// edge is between a parent and its own child (one way or the other), the folder-module
/// pattern (such a set is a tree: its only loops are parent ↔ own child).
pub(crate) fn circles(graph: &Graph) -> Vec<Vec<(PathBuf, PathBuf, Vec<String>)>> {
    let all = edges(graph);
    let nodes: Vec<&PathBuf> = graph.files.iter().collect();
    let at: BTreeMap<&PathBuf, usize> = nodes.iter().enumerate().map(|(i, f)| (*f, i)).collect();
    let succ: Vec<Vec<usize>> = nodes
        .iter()
        .map(|f| {
            all.get(*f)
                .map(|t| t.keys().filter_map(|k| at.get(*k).copied()).collect())
                .unwrap_or_default()
        })
        .collect();
    let family = |a: &PathBuf, b: &PathBuf| {
        graph.containment.contains_key(&(a.clone(), b.clone()))
            || graph.containment.contains_key(&(b.clone(), a.clone()))
    };
    let mut out = Vec::new();
    for scc in tarjan(&succ) {
        let members: BTreeSet<usize> = scc.into_iter().collect();
        let mut inside = Vec::new();
        for &a in &members {
            for (to, names) in all.get(nodes[a]).into_iter().flatten() {
                if at.get(*to).is_some_and(|b| members.contains(b)) {
                    inside.push((
                        nodes[a].clone(),
                        (*to).clone(),
                        names.iter().cloned().collect::<Vec<_>>(),
                    ));
                }
            }
        }
        if members.len() > 1 && !inside.iter().all(|(a, b, _)| family(a, b)) {
            out.push(inside);
        }
    }
    out
}

/// Strongly connected components, iteratively (no recursion depth to worry about).
fn tarjan(succ: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = succ.len();
    let (mut index, mut low, mut on) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut out, mut next) = (Vec::new(), Vec::new(), 0);
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut work = vec![(start, 0usize)];
        while let Some(&(v, k)) = work.last() {
            if k == 0 {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on[v] = true;
            }
            if let Some(&w) = succ[v].get(k) {
                if let Some(top) = work.last_mut() {
                    top.1 += 1;
                }
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut scc = Vec::new();
                while let Some(w) = stack.pop() {
                    on[w] = false;
                    scc.push(w);
                    if w == v {
                        break;
                    }
                }
                out.push(scc);
            }
        }
    }
    out
}
