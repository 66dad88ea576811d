//! The HTML report in a real browser: real runs recorded in a store, the site written by
//! `run --export-html`, loaded in headless Chromium through chromedriver (Debian's chromium
//! and chromium-driver, which CI installs). Every table, chart and link must render, and the
//! browser's console must stay free of errors. The test's screenshot of the page is kept
//! (BENCHSCOPE_HTML_SCREENSHOT=FILE copies it out).

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fantoccini::wd::WebDriverCompatibleCommand;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// The browser's console, as chromedriver keeps it (`goog:loggingPrefs`).
#[derive(Debug)]
struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(
        &self,
        base: &url::Url,
        session: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base.join(&format!("session/{}/se/log", session.unwrap_or_default()))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(r#"{"type":"browser"}"#.into()))
    }
}

struct Driver(std::process::Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn recorded(work: &Path, label: &str, html: Option<&Path>) {
    let store = work.join("store.sqlite").display().to_string();
    let mut c = common::small_run(
        &work.join("data"),
        &work.join("cache"),
        Some(&store),
        &["rusqlite", "middleware/spin"],
    );
    c.args(["--trace", "--label", label]);
    if let Some(dir) = html {
        c.arg("--export-html").arg(dir);
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn the_html_report_renders_in_headless_chromium_without_console_errors() {
    let test = "the_html_report_renders_in_headless_chromium_without_console_errors";
    if !Path::new(CHROMIUM).exists() || !Path::new(CHROMEDRIVER).exists() {
        bench_core::testing::skip(
            test,
            "chromium and chromedriver are not installed (apt-get install chromium chromium-driver)",
        );
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let site = work.path().join("site");
    for label in ["before", "middle"] {
        recorded(work.path(), label, None);
    }
    recorded(work.path(), "after", Some(&site));
    let index = site.join("index.html");
    let html = std::fs::read_to_string(&index).unwrap();
    assert!(
        !html.contains("<script"),
        "readable without JavaScript: none in it"
    );

    let port = free_port();
    let _driver = Driver(
        std::process::Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let profile = work.path().join("chromium-profile");
    let caps: fantoccini::wd::Capabilities = serde_json::from_value(serde_json::json!({
        "goog:chromeOptions": {
            "binary": CHROMIUM,
            "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--window-size=1280,4000",
                format!("--user-data-dir={}", profile.display()),
            ]
        },
        "goog:loggingPrefs": { "browser": "ALL" }
    }))
    .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let shot = work.path().join("report.png");
    let checks = rt.block_on(async {
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let mut builder = fantoccini::ClientBuilder::new(connector);
        builder.capabilities(caps);
        // chromedriver takes a moment to listen.
        let start = Instant::now();
        let client = loop {
            match builder.connect(&format!("http://127.0.0.1:{port}")).await {
                Ok(c) => break c,
                Err(e) if start.elapsed() > Duration::from_secs(20) => {
                    panic!("chromedriver did not take a session: {e}")
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
            }
        };
        let url = url::Url::from_file_path(&index).unwrap();
        client.goto(url.as_str()).await.unwrap();
        let page = client
            .execute(
                r#"
                const box = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
                return {
                  title: document.title,
                  headings: [...document.querySelectorAll('h1,h2,h3')].map(h => h.textContent),
                  tables: [...document.querySelectorAll('table')].map(t => ({
                    rows: t.rows.length, shown: box(t) })),
                  images: [...document.querySelectorAll('img')].map(i => ({
                    src: i.getAttribute('src'), loaded: i.complete && i.naturalWidth > 0,
                    shown: box(i) })),
                  links: [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href')),
                };"#,
                vec![],
            )
            .await
            .unwrap();
        let png = client.screenshot().await.unwrap();
        std::fs::write(&shot, png).unwrap();
        let log = client.issue_cmd(BrowserLog).await.unwrap();
        client.close().await.unwrap();
        (page, log)
    });
    let (page, log) = checks;
    let headings: Vec<&str> = page["headings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap())
        .collect();
    assert!(headings.contains(&"History"), "{headings:?}");
    assert!(
        headings
            .iter()
            .any(|h| h.starts_with("single_row_lookup / rusqlite on ")),
        "{headings:?}"
    );
    let tables = page["tables"].as_array().unwrap();
    // The comparison, the phases of the traced run, and a history table per bench at least.
    assert!(tables.len() >= 4, "{tables:?}");
    for t in tables {
        assert!(
            t["shown"].as_bool().unwrap() && t["rows"].as_u64().unwrap() >= 2,
            "{t}"
        );
    }
    let images = page["images"].as_array().unwrap();
    let srcs: Vec<&str> = images.iter().map(|i| i["src"].as_str().unwrap()).collect();
    // Distribution and phases of the run, and each bench's history.
    assert!(srcs.iter().any(|s| s.contains("distribution")), "{srcs:?}");
    assert!(srcs.iter().any(|s| s.contains("phases")), "{srcs:?}");
    assert_eq!(
        srcs.iter().filter(|s| s.contains("history")).count(),
        2,
        "{srcs:?}"
    );
    for i in images {
        assert!(
            i["loaded"].as_bool().unwrap() && i["shown"].as_bool().unwrap(),
            "{i}"
        );
    }
    // Every link leads to a file of the site.
    for l in page["links"].as_array().unwrap() {
        let href = l.as_str().unwrap();
        if href.starts_with('#') {
            continue;
        }
        assert!(
            site.join(href).exists(),
            "a link to {href}, not in the site"
        );
    }
    // The log must be what chromedriver returns (a list of entries, each with its level),
    // or the check below would pass on anything.
    let entries = log
        .as_array()
        .unwrap_or_else(|| panic!("the browser log is not a list: {log}"));
    assert!(
        entries.iter().all(|e| e["level"].is_string()),
        "log entries without a level: {log}"
    );
    let errors: Vec<&serde_json::Value> =
        entries.iter().filter(|e| e["level"] == "SEVERE").collect();
    assert!(errors.is_empty(), "console errors: {errors:?}");
    // The inert-page check on the page the browser opened.
    let html = std::fs::read_to_string(&index).unwrap();
    common::html_is_inert(&html).unwrap_or_else(|bad| panic!("{bad}"));
    assert!(std::fs::metadata(&shot).unwrap().len() > 10_000);
    if let Ok(out) = std::env::var("BENCHSCOPE_HTML_SCREENSHOT") {
        std::fs::copy(&shot, PathBuf::from(out)).unwrap();
    }
    assert_eq!(page["title"], "benchscope: single_row_lookup");
}
