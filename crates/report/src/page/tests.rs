use super::*;
use crate::{Series, Style};

fn chart(title: &str) -> Chart {
    Chart::new(title, "time (s)", "rate (Mbit/s)").series(Series::new(
        "flow",
        vec![(0.0, 1.0), (1.0, 2.0)],
        Style::Line,
    ))
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("fairstream-report-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    dir
}

fn sample() -> Page {
    let mut page = Page::new("Run <1> & more");
    page.heading(2, "Results")
        .paragraph("Made by `fairstream simulate a.toml` at 5 < 6.")
        .callout("The stream filled the link.")
        .list(&["one `x`".to_owned(), "two".to_owned()])
        .table(
            Table::new(&["flow", "throughput (Mbit/s)"])
                .row(vec!["tfrc".into(), "1.50".into()])
                .clone(),
        )
        .code_block("cargo run -- simulate a.toml --out x")
        .chart("throughput", chart("Throughput"));
    page
}

#[test]
fn the_html_is_self_contained() {
    let html = sample().to_html().unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<title>Run &lt;1&gt; &amp; more</title>"));
    assert!(html.contains("<h1>Run &lt;1&gt; &amp; more</h1>"));
    assert!(html.contains("<h2>Results</h2>"));
    assert!(html.contains("<code>fairstream simulate a.toml</code> at 5 &lt; 6."));
    assert!(html.contains("<p class=\"callout\">"));
    assert!(html.contains("<li>one <code>x</code></li>"));
    assert!(html.contains("<table>") && html.contains("<td class=\"number\">1.50</td>"));
    assert!(html.contains("<pre><code>cargo run -- simulate a.toml --out x</code></pre>"));
    // The chart is inline SVG, not a file.
    assert!(html.contains("<svg") && html.contains("Throughput"));
    assert!(!html.contains("throughput.png"));
    // No scripts, stylesheets, links or fetched images.
    for banned in ["<script", "<link", "href=", "src=", "url(", "@import"] {
        assert!(!html.contains(banned), "{banned} in the page");
    }
    // The only URL is the SVG namespace, which is never fetched.
    let urls = html.matches("http").count();
    let namespaces = html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count();
    assert_eq!(urls, namespaces);
}

#[test]
fn the_markdown_shows_the_same_blocks_with_charts_as_files() {
    let markdown = sample().to_markdown();
    let expected = "# Run \\<1> & more\n\n## Results\n\n\
                    Made by `fairstream simulate a.toml` at 5 \\< 6.\n\n\
                    > The stream filled the link.\n\n\
                    - one `x`\n- two\n\n\
                    | flow | throughput (Mbit/s) |\n|---|---:|\n| tfrc | 1.50 |\n\n\
                    ```\ncargo run -- simulate a.toml --out x\n```\n\n\
                    ![throughput](throughput.png)\n";
    assert_eq!(markdown, expected);
}

#[test]
fn write_puts_the_page_and_its_charts_in_the_folder() {
    let dir = scratch("write");
    let mut page = sample();
    page.chart("media/video/buffer", chart("Buffer"));
    page.write(&dir, "index").unwrap();
    let html = fs::read_to_string(dir.join("index.html")).unwrap();
    assert_eq!(html, page.to_html().unwrap());
    assert_eq!(
        fs::read_to_string(dir.join("index.md")).unwrap(),
        page.to_markdown()
    );
    assert_eq!(
        fs::read(dir.join("throughput.png")).unwrap(),
        chart("Throughput").to_png().unwrap()
    );
    assert!(dir.join("media/video/buffer.png").exists());
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn images_beside_the_page_are_embedded() {
    let dir = scratch("image");
    fs::create_dir_all(&dir).unwrap();
    chart("Picture")
        .write_png(&dir.join("picture.png"))
        .unwrap();
    let mut page = Page::new("Images");
    page.image("picture.png", "a \"picture\"");
    page.write(&dir, "page").unwrap();
    let html = fs::read_to_string(dir.join("page.html")).unwrap();
    assert!(
        html.contains("<img src=\"data:image/png;base64,iVBORw0KGgo"),
        "no embedded PNG"
    );
    assert!(html.contains("alt=\"a &quot;picture&quot;\""));
    assert!(page.to_markdown().contains("![a \"picture\"](picture.png)"));

    let mut missing = Page::new("Missing");
    missing.image("nowhere.png", "gone");
    let error = missing.to_html_in(&dir).unwrap_err();
    assert!(
        matches!(error, ReportError::Io { action: "read", .. }),
        "{error}"
    );
    assert!(error.to_string().contains("nowhere.png"), "{error}");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn unsafe_or_repeated_names_are_refused() {
    for name in ["", "../up", "a//b", "/root", "a b", "x/./y", "quote\"s"] {
        let mut page = Page::new("p");
        page.chart(name, chart("c"));
        let error = page.to_html().unwrap_err();
        assert!(matches!(error, ReportError::BadName(_)), "{name}: {error}");
    }
    let mut image = Page::new("p");
    image.image("../secret.png", "x");
    assert!(matches!(image.to_html(), Err(ReportError::BadName(_))));
    let mut twice = Page::new("p");
    twice.chart("a", chart("one")).chart("a", chart("two"));
    assert!(matches!(
        twice.to_html(),
        Err(ReportError::DuplicateName(_))
    ));

    let dir = scratch("stem");
    assert!(matches!(
        sample().write(&dir, "../index"),
        Err(ReportError::BadName(_))
    ));
    assert!(!dir.exists(), "nothing is written for a bad stem");
}

#[test]
fn a_chart_that_cannot_be_drawn_writes_nothing() {
    let dir = scratch("nothing");
    let mut page = sample();
    page.chart("empty", Chart::new("Empty", "x", "y"));
    assert!(matches!(
        page.write(&dir, "index"),
        Err(ReportError::Empty { .. })
    ));
    assert!(!dir.exists());
}

#[test]
fn headings_are_levels_two_to_four() {
    let mut page = Page::new("p");
    page.heading(1, "low")
        .heading(9, "high")
        .heading(3, "three");
    let html = page.to_html().unwrap();
    assert!(html.contains("<h2>low</h2>") && html.contains("<h4>high</h4>"));
    assert!(html.contains("<h3>three</h3>"));
}

#[test]
fn backticks_split_code_from_text() {
    assert_eq!(
        spans("a `b` c"),
        vec![Span::Text("a "), Span::Code("b"), Span::Text(" c")]
    );
    assert_eq!(spans("`x`"), vec![Span::Code("x")]);
    assert_eq!(spans("odd ` one"), vec![Span::Text("odd ` one")]);
    assert_eq!(spans("``"), vec![Span::Code("")]);
    assert!(spans("").is_empty());
}

#[test]
fn tables_pad_short_rows() {
    let table = Table {
        header: vec!["a".into()],
        rows: vec![vec!["1".into(), "2".into(), "3".into()], vec![]],
    };
    assert_eq!(table.columns(), 3);
    let mut page = Page::new("p");
    page.table(table);
    let html = page.to_html().unwrap();
    let th = "<th class=\"number\">";
    let header = format!("<thead><tr>{th}a</th>{th}</th>{th}</th></tr></thead>");
    assert!(html.contains(&header), "{html}");
    let td = "<td class=\"number\"></td>";
    assert!(html.contains(&format!("<tr>{td}{td}{td}</tr>")), "{html}");
}

#[test]
fn columns_of_numbers_are_told_from_columns_of_words() {
    let table = Table {
        header: vec!["flow".into(), "rate".into(), "RTT".into(), "note".into()],
        rows: vec![
            vec!["a".into(), "3.2".into(), "–".into(), "-".into()],
            vec!["b".into(), "-1 %".into(), "36.9 ms".into(), "".into()],
            vec!["c".into(), "+4".into(), "0.95 (n 1.1)".into(), "n/a".into()],
            vec!["d".into(), "no FEC".into(), "1 ms".into(), "5".into()],
        ],
    };
    // "no FEC" is one cell in four; the last column is half words.
    assert_eq!(table.numeric_columns(), vec![false, true, true, false]);
}
