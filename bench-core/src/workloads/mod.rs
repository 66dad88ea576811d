//! The targets, one module each: its catalog entry (always compiled, so every harness and
//! front end shares it) and bench-core's implementation (behind the SQLite features).
//!
//! Adding a target: a module here with `spec()` and a `Workload`, one line in [`targets`],
//! and one line in the registry of each harness that implements it ([`CORE`] here,
//! harness-sqlx's own).

pub mod async_contention;
pub mod bulk_insert;
pub mod crud_overhead;
pub mod key_value;
pub mod multithread;
pub mod script;
pub mod single_row_lookup;

use std::sync::LazyLock;

use crate::catalog::{CatalogError, Target};

/// Every target of the catalog, in the order the front ends show them.
pub fn targets() -> &'static [&'static Target] {
    static ALL: LazyLock<Vec<&'static Target>> = LazyLock::new(|| {
        vec![
            single_row_lookup::spec(),
            multithread::spec(),
            bulk_insert::spec(),
            async_contention::spec(),
            crud_overhead::spec(),
            key_value::spec(),
            script::spec(),
        ]
    });
    &ALL
}

/// The target named `name`, or an error naming the targets there are.
pub fn find(name: &str) -> Result<&'static Target, CatalogError> {
    targets()
        .iter()
        .copied()
        .find(|t| t.name == name)
        .ok_or_else(|| CatalogError::UnknownTarget {
            name: name.to_string(),
            known: targets()
                .iter()
                .map(|t| t.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// bench-core's implementations.
#[cfg(feature = "middleware")]
pub const CORE: crate::workload::Registry = crate::workload::Registry {
    harness: crate::catalog::Harness::Core,
    workloads: &[
        &single_row_lookup::core::Core,
        &multithread::core::Core,
        &bulk_insert::core::Core,
        &async_contention::core::Core,
        &crud_overhead::core::Core,
        &key_value::core::Core,
        &script::core::Core,
    ],
};

/// The sections of `run`'s workload (its own tables, [`crate::sections`]), if it has any.
pub fn sections_of(
    run: &crate::protocol::results::RunRecord,
) -> Option<&'static dyn crate::sections::Sections> {
    sections_of_target(run.start.as_ref()?.target.raw())
}

/// The sections of the target named `target`, if it has any: key_value, crud_overhead and
/// script add their own tables to every view of their runs.
fn sections_of_target(target: &str) -> Option<&'static dyn crate::sections::Sections> {
    match target {
        key_value::NAME => Some(&key_value::report::KvSections),
        crud_overhead::NAME => Some(&crud_overhead::report::CrudSections),
        script::NAME => Some(&script::report::ScriptSections),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{BenchKind, Harness, Strategy};

    /// The subject table and the catalog made from it agree: every workload a row names is a
    /// target, every crate serving a target has its bench there (with the row's words), and
    /// no crate bench is in a target its row does not name.
    #[test]
    fn the_catalog_s_crate_benches_are_the_subject_table_s() {
        use crate::catalog::Subject;
        use crate::catalog::table::crates::CRATES;
        let names: Vec<_> = targets().iter().map(|t| t.name).collect();
        for c in &CRATES {
            assert!(!c.serves.is_empty(), "{} serves no workload", c.name);
            for s in c.serves {
                assert!(
                    names.contains(&s.workload),
                    "{}: no target {}",
                    c.name,
                    s.workload
                );
            }
        }
        for t in targets() {
            for c in &CRATES {
                let benches: Vec<_> = t
                    .benches
                    .iter()
                    .filter(|b| b.subject == Subject::Crate(c.id))
                    .collect();
                match c.serving(t.name) {
                    None => assert!(benches.is_empty(), "{} has {} benches", t.name, c.name),
                    Some(serve) => {
                        let whole = benches
                            .iter()
                            .find(|b| b.kind == BenchKind::Bench && b.name.ends_with(c.name))
                            .unwrap_or_else(|| panic!("{}: no bench of {}", t.name, c.name));
                        assert_eq!(whole.about, serve.about(c));
                        if let Some(op) = serve.op {
                            assert_eq!(whole.op, op);
                        }
                        for m in serve.more {
                            assert!(benches.iter().any(|b| b.name == m.name && b.op == m.op));
                        }
                        for (phase, reason) in serve.hidden {
                            assert!(t.hidden.iter().any(|h| h.bench == whole.name
                                && h.phase == phase.label()
                                && h.reason == *reason));
                        }
                    }
                }
            }
        }
    }

    /// The strategies' rows are `Strategy::ALL`, in its order, each with its own name.
    #[test]
    fn the_subject_table_has_one_row_per_strategy_in_order() {
        use crate::catalog::table::strategies::STRATEGIES;
        let ids: Vec<_> = STRATEGIES.iter().map(|d| d.id).collect();
        assert_eq!(ids, Strategy::ALL.to_vec());
        for s in Strategy::ALL {
            assert_eq!(s.name().parse::<Strategy>().unwrap(), s);
            for w in [
                single_row_lookup::NAME,
                multithread::NAME,
                async_contention::NAME,
            ] {
                assert!(!s.how(w).is_empty());
            }
        }
    }

    #[test]
    fn names_are_unique_and_baselines_exist() {
        for t in targets() {
            let mut names: Vec<_> = t.benches.iter().map(|b| b.name).collect();
            names.sort();
            names.dedup();
            assert_eq!(
                names.len(),
                t.benches.len(),
                "duplicate bench in {}",
                t.name
            );
            assert!(t.spec(t.baseline).is_ok());
            for k in &t.knobs {
                assert!(
                    k.parse(&k.default_value().to_string()).is_ok(),
                    "{} default",
                    k.name
                );
            }
        }
    }

    #[test]
    fn every_strategy_has_a_bench_and_an_interact_micro() {
        let t = single_row_lookup::spec();
        for s in Strategy::ALL {
            let b = t.spec(&format!("middleware/{}", s.name())).unwrap();
            assert_eq!(b.strategy(), Some(s));
            let m = t.spec(&format!("interact/{}", s.name())).unwrap();
            assert_eq!(m.kind, BenchKind::Micro);
        }
    }

    #[test]
    fn unknown_targets_and_benches_name_what_there_is() {
        assert_eq!(
            find("nope").unwrap_err().to_string(),
            "unknown target \"nope\" (known: single_row_lookup, multithread_pool_checkout, bulk_insert, async_contention, crud_overhead, key_value, script)"
        );
        let e = find("single_row_lookup")
            .unwrap()
            .spec("x")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "unknown bench \"x\" in target single_row_lookup (known: rusqlite, sqlite3_c, "
            ),
            "{e}"
        );
    }

    #[test]
    fn bench_patterns_select_as_criterion_filters_do() {
        let names = |t: &str, p: &str| -> Vec<&'static str> {
            find(t)
                .unwrap()
                .select(p)
                .unwrap()
                .iter()
                .map(|b| b.name)
                .collect()
        };
        // An exact name is that bench alone, though it is part of other names.
        assert_eq!(names("single_row_lookup", "rusqlite"), ["rusqlite"]);
        // Anything else is a regular expression matched anywhere in the name, in catalog order.
        let puts = names("key_value", "single_put_100b/r");
        assert_eq!(
            puts,
            [
                "single_put_100b/rusqlite",
                "single_put_100b/r2d2_sqlite/spawn_blocking",
                "single_put_100b/r2d2_sqlite/block_in_place"
            ]
        );
        assert_eq!(
            names("key_value", "^concurrent_reads_[48]/memory$"),
            ["concurrent_reads_4/memory", "concurrent_reads_8/memory"]
        );
        let every = find("key_value").unwrap().benches.len();
        assert_eq!(names("key_value", "/").len(), every);
        assert_eq!(names("key_value", "^single_put").len(), 2 * every / 18);

        // Nothing selected: the error says why and names the nearest names first.
        let e = find("single_row_lookup")
            .unwrap()
            .select("rusqlte")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--bench \"rusqlte\" selects nothing in target single_row_lookup: no name matches it (nearest: rusqlite, "),
            "{e}"
        );
        assert!(
            e.ends_with(", ...; every name: `benchscope list single_row_lookup`)"),
            "{e}"
        );
        let e = find("key_value")
            .unwrap()
            .select("single_put(")
            .unwrap_err();
        assert!(
            e.to_string().contains(
                "it is neither a bench name nor a regular expression (error: unclosed group)"
            ),
            "{e}"
        );
    }

    #[cfg(feature = "middleware")]
    #[test]
    fn the_core_registry_implements_every_target_with_core_benches() {
        for t in targets() {
            let has_core = t.benches.iter().any(|b| b.harness() == Harness::Core);
            assert_eq!(CORE.find(t.name).is_some(), has_core, "{}", t.name);
        }
    }

    /// A workload's sections are found by its target's name: key_value, crud_overhead and
    /// script have their own, the other targets none.
    #[test]
    fn sections_are_found_by_the_target_s_name() {
        for t in targets() {
            assert_eq!(
                sections_of_target(t.name).is_some(),
                [key_value::NAME, crud_overhead::NAME, script::NAME].contains(&t.name),
                "{}",
                t.name
            );
        }
    }
}
