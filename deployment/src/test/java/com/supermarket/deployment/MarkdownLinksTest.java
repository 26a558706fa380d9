package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every relative link in the repository's Markdown files leads somewhere: the file or folder
 * exists, and a {@code #fragment} into a Markdown file names one of its headings (GitHub's
 * anchors: lower case, punctuation dropped, spaces as hyphens, repeats numbered).
 */
class MarkdownLinksTest {

    private static final Pattern LINK = Pattern.compile("\\[[^\\]]*\\]\\(([^)\\s]+)\\)");
    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");
    private static final Set<String> SKIPPED_DIRS = Set.of(".git", "target", "node_modules", "runs", ".terraform");

    @Test
    void everyRelativeLinkResolves() throws IOException {
        Path root = DeploymentFiles.root();
        List<Path> documents = markdownFiles(root);
        assertThat(documents).as("Markdown files under " + root).contains(root.resolve("README.md"));
        List<String> broken = new ArrayList<>();
        Map<Path, Set<String>> anchors = new HashMap<>();
        int links = 0;
        for (Path document : documents) {
            for (String target : relativeLinks(document)) {
                links++;
                String problem = problem(document, target, anchors);
                if (problem != null) {
                    broken.add(root.relativize(document) + ": (" + target + ") " + problem);
                }
            }
        }
        assertThat(links).as("relative links found").isGreaterThan(50);
        assertThat(broken).as("broken relative links").isEmpty();
    }

    @Test
    void anchorsFollowGitHubsRules() {
        assertThat(anchors(List.of("## EKS walkthrough: `scripts/eks.sh up`, `load`, `results`, `down`",
                "## 2026-11-26: a second store copy's price", "### Notes", "### Notes")))
                .containsExactlyInAnyOrder("eks-walkthrough-scriptsekssh-up-load-results-down",
                        "2026-11-26-a-second-store-copys-price", "notes", "notes-1");
    }

    private static String problem(Path document, String target, Map<Path, Set<String>> anchors) throws IOException {
        int hash = target.indexOf('#');
        String file = hash < 0 ? target : target.substring(0, hash);
        String fragment = hash < 0 ? null : target.substring(hash + 1);
        Path resolved = file.isEmpty() ? document : document.getParent().resolve(file).normalize();
        if (!Files.exists(resolved)) {
            return "no such file";
        }
        if (fragment == null || fragment.isEmpty() || !resolved.toString().endsWith(".md")) {
            return null;
        }
        Set<String> known = anchors.computeIfAbsent(resolved, path -> {
            try {
                return anchors(Files.readAllLines(path));
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        return known.contains(fragment) ? null : "no heading with anchor #" + fragment;
    }

    private static List<Path> markdownFiles(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(path -> path.toString().endsWith(".md"))
                    .filter(path -> {
                        for (Path part : root.relativize(path)) {
                            if (SKIPPED_DIRS.contains(part.toString())) {
                                return false;
                            }
                        }
                        return true;
                    })
                    .sorted()
                    .toList();
        }
    }

    /** Link targets outside fenced code blocks that are neither absolute URLs nor mail addresses. */
    private static List<String> relativeLinks(Path document) throws IOException {
        List<String> targets = new ArrayList<>();
        boolean fenced = false;
        for (String line : Files.readAllLines(document)) {
            if (line.stripLeading().startsWith("```")) {
                fenced = !fenced;
                continue;
            }
            if (fenced) {
                continue;
            }
            Matcher link = LINK.matcher(line.replaceAll("`[^`]*`", "``"));
            while (link.find()) {
                String target = link.group(1);
                if (!target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
                    targets.add(target);
                }
            }
        }
        return targets;
    }

    private static Set<String> anchors(List<String> lines) {
        Set<String> anchors = new HashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        boolean fenced = false;
        for (String line : lines) {
            if (line.stripLeading().startsWith("```")) {
                fenced = !fenced;
                continue;
            }
            Matcher heading = HEADING.matcher(line);
            if (fenced || !heading.matches()) {
                continue;
            }
            String slug = heading.group(1).toLowerCase(Locale.ROOT)
                    .replaceAll("[^\\p{L}\\p{N} _-]", "")
                    .replace(' ', '-');
            int count = seen.merge(slug, 1, Integer::sum);
            anchors.add(count == 1 ? slug : slug + "-" + (count - 1));
        }
        return anchors;
    }
}
