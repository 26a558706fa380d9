package com.supermarket.loadclient.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * The report as one HTML file that needs nothing else: the Markdown report's headings, text and
 * tables turned into HTML, and the PNG charts inline as {@code data:} URIs. No external resource
 * (no stylesheet, font or script from the network), so it opens anywhere, offline, and can be
 * mailed as it is. A small inline script records, once the page has loaded, how many charts
 * decoded with a non-zero size and how many rows each table has, in the {@code data-} attributes
 * of {@code #render-status} (what a headless browser's test reads). Stateless.
 */
final class HtmlReport {

    private static final String STYLE = """
            body { font-family: sans-serif; margin: 2em; color: #222; }
            table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
            th, td { border: 1px solid #bbb; padding: 0.2em 0.5em; }
            th { background: #eee; }
            td.num, th.num { text-align: right; }
            figure { display: inline-block; margin: 0.5em; }
            img.chart { max-width: 100%; border: 1px solid #ddd; }
            """;

    private static final String STATUS_SCRIPT = """
            window.addEventListener('load', function () {
              var charts = document.querySelectorAll('img.chart');
              var sizes = [];
              var rendered = 0;
              charts.forEach(function (img) {
                sizes.push(img.naturalWidth + 'x' + img.naturalHeight);
                if (img.complete && img.naturalWidth > 0 && img.naturalHeight > 0) { rendered++; }
              });
              var rows = [];
              document.querySelectorAll('table').forEach(function (t) { rows.push(t.tBodies[0].rows.length); });
              var status = document.getElementById('render-status');
              status.setAttribute('data-charts', charts.length);
              status.setAttribute('data-charts-rendered', rendered);
              status.setAttribute('data-chart-sizes', sizes.join(' '));
              status.setAttribute('data-table-rows', rows.join(','));
              status.textContent = rendered + ' of ' + charts.length + ' charts rendered, ' + rows.length + ' tables';
            });
            """;

    private HtmlReport() {
    }

    /** Writes {@code markdown} (as the report writes it) and the {@code charts} (PNG files) to {@code html}. */
    static void write(String markdown, List<Path> charts, Path html) throws IOException {
        StringBuilder page = new StringBuilder("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                + "<title>Load client report</title>\n<style>\n" + STYLE + "</style>\n</head>\n<body>\n");
        page.append(body(markdown));
        if (!charts.isEmpty()) {
            page.append("<h2>Charts</h2>\n");
        }
        for (Path chart : charts) {
            String name = chart.getFileName().toString();
            page.append("<figure><img class=\"chart\" alt=\"").append(escape(name)).append("\" src=\"data:image/png;base64,")
                    .append(Base64.getEncoder().encodeToString(Files.readAllBytes(chart))).append("\"><figcaption>")
                    .append(escape(name)).append("</figcaption></figure>\n");
        }
        page.append("<p id=\"render-status\"></p>\n<script>\n").append(STATUS_SCRIPT).append("</script>\n</body>\n</html>\n");
        Files.writeString(html, page, StandardCharsets.UTF_8);
    }

    /**
     * Headings ({@code #} to {@code ###}), tables (a header, a separator with alignments, rows),
     * fenced code blocks and paragraphs: what the report and {@code scripts/benchmark.sh} write.
     */
    static String body(String markdown) {
        StringBuilder html = new StringBuilder();
        List<String> table = new ArrayList<>();
        boolean code = false;
        for (String line : markdown.split("\n", -1)) {
            if (line.startsWith("```")) {
                html.append(table(table)).append(code ? "</pre>\n" : "<pre>");
                table.clear();
                code = !code;
                continue;
            }
            if (code) {
                html.append(escape(line)).append('\n');
                continue;
            }
            if (line.startsWith("|")) {
                table.add(line);
                continue;
            }
            html.append(table(table));
            table.clear();
            if (line.startsWith("### ")) {
                html.append("<h3>").append(inline(line.substring(4))).append("</h3>\n");
            } else if (line.startsWith("## ")) {
                html.append("<h2>").append(inline(line.substring(3))).append("</h2>\n");
            } else if (line.startsWith("# ")) {
                html.append("<h1>").append(inline(line.substring(2))).append("</h1>\n");
            } else if (!line.isBlank()) {
                html.append("<p>").append(inline(line)).append("</p>\n");
            }
        }
        return html.append(table(table)).append(code ? "</pre>\n" : "").toString();
    }

    private static String table(List<String> lines) {
        if (lines.isEmpty()) {
            return "";
        }
        List<String> header = cells(lines.get(0));
        List<Boolean> right = lines.size() > 1 ? cells(lines.get(1)).stream().map(cell -> cell.endsWith(":")).toList()
                : List.of();
        StringBuilder html = new StringBuilder("<table>\n<thead><tr>");
        row(html, "th", header, right);
        html.append("</tr></thead>\n<tbody>\n");
        for (String line : lines.subList(Math.min(2, lines.size()), lines.size())) {
            html.append("<tr>");
            row(html, "td", cells(line), right);
            html.append("</tr>\n");
        }
        return html.append("</tbody>\n</table>\n").toString();
    }

    private static void row(StringBuilder html, String tag, List<String> cells, List<Boolean> right) {
        for (int i = 0; i < cells.size(); i++) {
            boolean number = i < right.size() && right.get(i);
            html.append('<').append(tag).append(number ? " class=\"num\">" : ">").append(inline(cells.get(i)))
                    .append("</").append(tag).append('>');
        }
    }

    /** The cells of a {@code | a | b |} line; {@code \|} is a literal bar inside a cell. */
    private static List<String> cells(String line) {
        String inner = line.strip();
        inner = inner.substring(1, inner.endsWith("|") && !inner.endsWith("\\|") ? inner.length() - 1 : inner.length());
        List<String> cells = new ArrayList<>();
        for (String cell : inner.split("(?<!\\\\)\\|", -1)) {
            cells.add(cell.strip().replace("\\|", "|"));
        }
        return cells;
    }

    /** Escapes the text and turns {@code **bold**} into {@code <strong>}. */
    private static String inline(String text) {
        return escape(text).replaceAll("\\*\\*(.+?)\\*\\*", "<strong>$1</strong>");
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
