#![allow(dead_code)] // each test file uses a part of it
//! How a crate's files import each other, read by a Rust parser (syn) rather than by text:
//! every path form counts.
//!
//! - `crate::a::b`, `super::...` (climbing once per `super`), `self::...`, and the crate's own
//!   name (`bench_core::...` inside bench-core);
//! - a path whose first part is a child module of the file (a parent's `pub use child::x`);
//! - `use` trees with groups (`use crate::{a, b::{c, d}}`), paths in types, patterns,
//!   attributes and inside macro calls (`format!("{}", crate::x::f())`);
//! - an item, an `impl` member or a statement marked `#[cfg(test)]` (at any depth, not only at
//!   the left margin) is the tests' and left out; an inline module (`mod through { ... }`)
//!   resolves its own `super::`.
//!
//! A path names the deepest file it reaches (`crate::measure::stats::median` names
//! `measure/stats.rs`); a file naming itself is no edge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// Each file's module path (`measure::stats`, `catalog` for `catalog/mod.rs`, `` for
/// `lib.rs`/`main.rs`) and the files it names.
pub type Graph = BTreeMap<String, BTreeSet<String>>;

/// The import graph of the crate whose sources are under `src` (`bin/` left out). `own_name`
/// is the name the crate's own code may use for itself (`bench_core`), if any.
pub fn graph(src: &Path, own_name: Option<&str>) -> Graph {
    let mut files = BTreeMap::new();
    modules(src, src, &mut files);
    let known: BTreeSet<String> = files.keys().cloned().collect();
    let mut read = BTreeMap::new();
    let mut for_tests_only = BTreeSet::new();
    for (module, path) in &files {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let mut reader = Reader {
            known: &known,
            own_name,
            scope: split(module),
            found: Vec::new(),
            test_modules: Vec::new(),
        };
        reader.visit_file(&file);
        for_tests_only.extend(reader.test_modules);
        read.insert(module.clone(), reader.found);
    }
    // A file declared `#[cfg(test)] mod tests;` is the tests', and so is all below it.
    let tests_only = |m: &str| {
        for_tests_only
            .iter()
            .any(|t: &String| m == t || m.starts_with(&format!("{t}::")))
    };
    let mut edges = Graph::new();
    for (module, found) in read {
        if tests_only(&module) {
            continue;
        }
        let out = edges.entry(module.clone()).or_default();
        for path in found {
            let target = (0..=path.len())
                .rev()
                .map(|n| path[..n].join("::"))
                .find(|m| known.contains(m));
            if let Some(t) = target
                && t != module
                && !tests_only(&t)
            {
                out.insert(t);
            }
        }
    }
    edges
}

/// The first cycle of `edges` (`[a, b, a]`), if any.
pub fn cycle(edges: &Graph) -> Option<Vec<String>> {
    let mut state = BTreeMap::new();
    edges
        .keys()
        .find_map(|m| visit(m, edges, &mut state, &mut Vec::new()))
}

/// The layers written in `doc` between the lines `<!-- layers -->` and `<!-- /layers -->`: one
/// `- ` line per layer, top first, each entry in backticks: a module as a folder path
/// (`measure`, `measure/stats`), `*` standing for any one name (`workloads/*/core`). No other
/// backticks on those lines.
pub fn layers(doc: &str) -> Vec<Vec<String>> {
    let start = doc
        .find("<!-- layers -->")
        .expect("a `<!-- layers -->` list");
    let end = doc[start..].find("<!-- /layers -->").expect("its end") + start;
    doc[start..end]
        .lines()
        .filter(|l| l.starts_with("- "))
        .map(|l| l.split('`').skip(1).step_by(2).map(String::from).collect())
        .collect()
}

/// The entry of `layers` a file belongs to: the most specific one that names it or a folder
/// above it, and that entry's layer (0 at the top).
pub fn place(module: &str, layers: &[Vec<String>]) -> Option<(String, usize)> {
    let parts = split(module);
    let mut best: Option<(String, usize, usize)> = None;
    for (i, layer) in layers.iter().enumerate() {
        for entry in layer {
            let e: Vec<&str> = entry.split('/').collect();
            let fits =
                parts.len() >= e.len() && e.iter().zip(&parts).all(|(a, b)| *a == "*" || a == b);
            if fits && best.as_ref().is_none_or(|b| e.len() > b.2) {
                best = Some((entry.clone(), i, e.len()));
            }
        }
    }
    best.map(|(e, i, _)| (e, i))
}

/// Every file the layers do not place, and every import that goes up them: from a file to a
/// file whose entry is in an earlier layer. Files of one layer may import each other (the
/// cycle check keeps them in order).
pub fn against_layers(edges: &Graph, layers: &[Vec<String>]) -> Vec<String> {
    let mut wrong = Vec::new();
    for (from, tos) in edges.iter().filter(|(m, _)| !m.is_empty()) {
        let Some((fe, fl)) = place(from, layers) else {
            wrong.push(format!("{from} is in no layer"));
            continue;
        };
        for to in tos.iter().filter(|t| !t.is_empty()) {
            match place(to, layers) {
                None => wrong.push(format!("{to} is in no layer")),
                Some((te, tl)) if tl < fl => wrong.push(format!(
                    "{from} (`{fe}`, layer {}) names {to} (`{te}`, layer {})",
                    fl + 1,
                    tl + 1
                )),
                _ => {}
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    wrong
}

fn split(module: &str) -> Vec<String> {
    module
        .split("::")
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// Depth-first search from `m` for a cycle (state: 1 on the stack, 2 done).
fn visit(
    m: &str,
    edges: &Graph,
    state: &mut BTreeMap<String, u8>,
    stack: &mut Vec<String>,
) -> Option<Vec<String>> {
    match state.get(m) {
        Some(2) => return None,
        Some(1) => {
            let from = stack.iter().position(|s| s == m)?;
            let mut cycle = stack[from..].to_vec();
            cycle.push(m.to_string());
            return Some(cycle);
        }
        _ => {}
    }
    state.insert(m.to_string(), 1);
    stack.push(m.to_string());
    for next in edges.get(m).into_iter().flatten() {
        if let Some(c) = visit(next, edges, state, stack) {
            return Some(c);
        }
    }
    stack.pop();
    state.insert(m.to_string(), 2);
    None
}

/// Every `.rs` file under `dir` by its module path; `bin/` left out.
fn modules(root: &Path, dir: &Path, out: &mut BTreeMap<String, PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{dir:?}: {e}"))
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "bin") {
                modules(root, &path, out);
            }
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = path.strip_prefix(root).unwrap().with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if matches!(
            parts.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            parts.pop();
        }
        out.insert(parts.join("::"), path);
    }
}

/// Whether `attrs` hold `#[cfg(test)]` (or a `cfg` that needs `test`: `all(test, ...)`).
fn for_tests(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta.require_list().is_ok_and(|l| {
                let t = l.tokens.to_string().replace(' ', "");
                t == "test" || t.starts_with("all(test,") || t.contains(",test)")
            })
            && !a
                .meta
                .require_list()
                .is_ok_and(|l| l.tokens.to_string().contains("not"))
    })
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item::*;
    match item {
        Const(i) => &i.attrs,
        Enum(i) => &i.attrs,
        ExternCrate(i) => &i.attrs,
        Fn(i) => &i.attrs,
        ForeignMod(i) => &i.attrs,
        Impl(i) => &i.attrs,
        Macro(i) => &i.attrs,
        Mod(i) => &i.attrs,
        Static(i) => &i.attrs,
        Struct(i) => &i.attrs,
        Trait(i) => &i.attrs,
        TraitAlias(i) => &i.attrs,
        Type(i) => &i.attrs,
        Union(i) => &i.attrs,
        Use(i) => &i.attrs,
        _ => &[],
    }
}

struct Reader<'a> {
    known: &'a BTreeSet<String>,
    own_name: Option<&'a str>,
    /// The module the code being read is in (a file's, or an inline module's in it).
    scope: Vec<String>,
    /// Every path named, resolved from the crate root.
    found: Vec<Vec<String>>,
    /// The child modules declared for the tests only (`#[cfg(test)] mod tests;`).
    test_modules: Vec<String>,
}

impl Reader<'_> {
    /// `segments` from the crate root, when they name something of this crate.
    fn resolve(&mut self, segments: &[String]) {
        let Some(first) = segments.first() else {
            return;
        };
        let mut base;
        let mut rest = segments;
        if first == "crate" || Some(first.as_str()) == self.own_name {
            base = Vec::new();
            rest = &segments[1..];
        } else if first == "self" {
            base = self.scope.clone();
            rest = &segments[1..];
        } else if first == "super" {
            base = self.scope.clone();
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
        } else {
            // A child module of this one (`pub use child::x`).
            let mut child = self.scope.clone();
            child.push(first.clone());
            if !self.known.contains(&child.join("::")) {
                return;
            }
            base = self.scope.clone();
        }
        base.extend(rest.iter().cloned());
        self.found.push(base);
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                prefix.push(n.ident.to_string());
                let p = prefix.clone();
                self.resolve(&p);
                prefix.pop();
            }
            syn::UseTree::Rename(r) => {
                prefix.push(r.ident.to_string());
                let p = prefix.clone();
                self.resolve(&p);
                prefix.pop();
            }
            syn::UseTree::Glob(_) => {
                let p = prefix.clone();
                self.resolve(&p);
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }

    /// The paths in a macro call's tokens: an identifier followed by `::` and more.
    fn tokens(&mut self, tokens: proc_macro2::TokenStream) {
        let trees: Vec<proc_macro2::TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                proc_macro2::TokenTree::Group(g) => {
                    self.tokens(g.stream());
                    i += 1;
                }
                proc_macro2::TokenTree::Ident(id) => {
                    let mut path = vec![id.to_string()];
                    let mut j = i + 1;
                    while let (
                        Some(proc_macro2::TokenTree::Punct(a)),
                        Some(proc_macro2::TokenTree::Punct(b)),
                        Some(proc_macro2::TokenTree::Ident(next)),
                    ) = (trees.get(j), trees.get(j + 1), trees.get(j + 2))
                    {
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        path.push(next.to_string());
                        j += 3;
                    }
                    if path.len() > 1 {
                        self.resolve(&path);
                    }
                    i = j;
                }
                _ => i += 1,
            }
        }
    }
}

impl<'ast> Visit<'ast> for Reader<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !for_tests(item_attrs(item)) {
            syn::visit::visit_item(self, item);
        } else if let syn::Item::Mod(m) = item {
            let mut path = self.scope.clone();
            path.push(m.ident.to_string());
            self.test_modules.push(path.join("::"));
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if m.content.is_some() {
            self.scope.push(m.ident.to_string());
            syn::visit::visit_item_mod(self, m);
            self.scope.pop();
        }
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        let attrs = match item {
            syn::ImplItem::Const(i) => &i.attrs,
            syn::ImplItem::Fn(i) => &i.attrs,
            syn::ImplItem::Type(i) => &i.attrs,
            syn::ImplItem::Macro(i) => &i.attrs,
            _ => return syn::visit::visit_impl_item(self, item),
        };
        if !for_tests(attrs) {
            syn::visit::visit_impl_item(self, item);
        }
    }

    fn visit_stmt(&mut self, stmt: &'ast syn::Stmt) {
        let skip = match stmt {
            syn::Stmt::Local(l) => for_tests(&l.attrs),
            syn::Stmt::Macro(m) => for_tests(&m.attrs),
            _ => false,
        };
        if !skip {
            syn::visit::visit_stmt(self, stmt);
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut prefix = Vec::new();
        self.use_tree(&mut prefix, &u.tree);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if segments.len() > 1 {
            self.resolve(&segments);
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.tokens(m.tokens.clone());
        syn::visit::visit_macro(self, m);
    }
}
