#![allow(dead_code)] // each test file uses a part of it
//! The size of each file's non-test part and of each function, read by a Rust parser (syn,
//! with line numbers): what `tests/sizes.rs` lists and holds to the limits of
//! docs/src/architecture.md ("Sizes").

use std::path::PathBuf;

use syn::spanned::Spanned;
use syn::visit::Visit;

/// A file's lines outside its tests, and its functions longer than `fn_limit` lines (name,
/// first line, length).
pub struct FileSize {
    pub path: PathBuf,
    pub non_test_lines: usize,
    pub long_functions: Vec<(String, usize, usize)>,
}

/// Every `.rs` file under `roots`, but the files declared `#[cfg(test)] mod x;` (by the name
/// `tests.rs` or a `tests/` folder, the tree's convention) and `bin/`.
pub fn sizes(roots: &[PathBuf], fn_limit: usize) -> Vec<FileSize> {
    // The tree's walk (sorted, `tests/` and `target/` left out), less the tests' own files
    // and `bin/`.
    bench_core::testing::rust_files(roots)
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            name != "tests.rs"
                && !name.ends_with("_props.rs")
                && p.parent()
                    .and_then(|d| d.file_name())
                    .is_none_or(|d| d != "bin")
        })
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
            let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"));
            let mut r = Reader {
                test_lines: 0,
                stack: Vec::new(),
                long: Vec::new(),
                limit: fn_limit,
            };
            r.visit_file(&file);
            FileSize {
                non_test_lines: text.lines().count().saturating_sub(r.test_lines),
                long_functions: r.long,
                path,
            }
        })
        .collect()
}

/// The first line of `from` and how many lines reach to the end of `to`.
fn lines(from: proc_macro2::Span, to: proc_macro2::Span) -> (usize, usize) {
    (from.start().line, to.end().line - from.start().line + 1)
}

fn for_tests(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta
                .require_list()
                .is_ok_and(|l| l.tokens.to_string().replace(' ', "") == "test")
    })
}

struct Reader {
    test_lines: usize,
    /// The names of the items the reader is in (`Type::method`).
    stack: Vec<String>,
    long: Vec<(String, usize, usize)>,
    limit: usize,
}

impl Reader {
    fn function(&mut self, name: String, from: proc_macro2::Span, to: proc_macro2::Span) {
        let (first, n) = lines(from, to);
        if n > self.limit {
            let mut path = self.stack.clone();
            path.push(name);
            self.long.push((path.join("::"), first, n));
        }
    }
}

impl<'ast> Visit<'ast> for Reader {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(i) => &i.attrs,
            syn::Item::Fn(i) => &i.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Struct(i) => &i.attrs,
            syn::Item::Enum(i) => &i.attrs,
            syn::Item::Const(i) => &i.attrs,
            syn::Item::Static(i) => &i.attrs,
            syn::Item::Use(i) => &i.attrs,
            syn::Item::Macro(i) => &i.attrs,
            _ => &Vec::new(),
        };
        if for_tests(attrs) {
            // The item and its attributes' lines.
            let first = attrs.first().map_or(item.span(), |a| a.span());
            self.test_lines += item.span().end().line - first.start().line + 1;
            return;
        }
        syn::visit::visit_item(self, item);
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.function(f.sig.ident.to_string(), f.sig.fn_token.span, f.block.span());
        self.stack.push(f.sig.ident.to_string());
        syn::visit::visit_item_fn(self, f);
        self.stack.pop();
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        let ty = match &*i.self_ty {
            syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        self.stack.push(ty.unwrap_or_else(|| "impl".into()));
        syn::visit::visit_item_impl(self, i);
        self.stack.pop();
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if for_tests(&f.attrs) {
            let first = f.attrs.first().map_or(f.span(), |a| a.span());
            self.test_lines += f.span().end().line - first.start().line + 1;
            return;
        }
        self.function(f.sig.ident.to_string(), f.sig.fn_token.span, f.block.span());
        self.stack.push(f.sig.ident.to_string());
        syn::visit::visit_impl_item_fn(self, f);
        self.stack.pop();
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        self.stack.push(m.ident.to_string());
        syn::visit::visit_item_mod(self, m);
        self.stack.pop();
    }
}
