package com.supermarket.deployment;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A structural reading of terraform/*.tf: top-level blocks with their labels and bodies, found
 * by brace matching (strings and comments are respected). Enough to check conventions without
 * the terraform binary; not an HCL parser. Immutable; thread-safe.
 */
final class TerraformFiles {

    static final Path DIR = DeploymentFiles.resolve("terraform");

    private static final Pattern BLOCK_START =
            Pattern.compile("(?m)^(\\w+)((?:\\s+\"[^\"]*\")*)\\s*\\{");

    /** A top-level block: {@code type "label" "label" { body }}. */
    record Block(String file, String type, List<String> labels, String body) {

        String label() {
            return labels.isEmpty() ? "" : labels.getFirst();
        }

        /** The value of a top-level attribute of the body ({@code name = value}), or null. */
        String attribute(String name) {
            Matcher m = Pattern.compile("(?m)^\\s{2}" + Pattern.quote(name) + "\\s*=\\s*(.+)$").matcher(body);
            return m.find() ? m.group(1).strip() : null;
        }

        /** The nested blocks of this body with the given type, as bodies. */
        List<String> nested(String type) {
            return blocks(file, body.replaceAll("(?m)^  ", "")).stream()
                    .filter(b -> b.type().equals(type)).map(Block::body).toList();
        }
    }

    private TerraformFiles() {
    }

    static List<Path> files() {
        try (Stream<Path> files = Files.list(DIR)) {
            return files.filter(f -> f.toString().endsWith(".tf")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static List<Block> blocks() {
        List<Block> blocks = new ArrayList<>();
        for (Path file : files()) {
            blocks.addAll(blocks(file.getFileName().toString(), DeploymentFiles.read(file)));
        }
        return blocks;
    }

    static List<Block> blocks(String type) {
        return blocks().stream().filter(b -> b.type().equals(type)).toList();
    }

    private static List<Block> blocks(String file, String text) {
        String code = blankComments(text);
        List<Block> blocks = new ArrayList<>();
        Matcher start = BLOCK_START.matcher(code);
        int from = 0;
        while (start.find(from)) {
            int open = start.end() - 1;
            int close = matchingBrace(code, open);
            List<String> labels = new ArrayList<>();
            Matcher label = Pattern.compile("\"([^\"]*)\"").matcher(start.group(2));
            while (label.find()) {
                labels.add(label.group(1));
            }
            blocks.add(new Block(file, start.group(1), labels, code.substring(open + 1, close)));
            from = close + 1;
        }
        return blocks;
    }

    private static int matchingBrace(String code, int open) {
        int depth = 0;
        boolean inString = false;
        for (int i = open; i < code.length(); i++) {
            char c = code.charAt(i);
            if (inString) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '{') {
                depth++;
            } else if (c == '}' && --depth == 0) {
                return i;
            }
        }
        throw new IllegalStateException("unbalanced braces from offset " + open);
    }

    /** Comments replaced by spaces (offsets kept), strings left alone. */
    private static String blankComments(String text) {
        StringBuilder out = new StringBuilder(text);
        boolean inString = false;
        for (int i = 0; i < out.length(); i++) {
            char c = out.charAt(i);
            if (inString) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '#' || (c == '/' && i + 1 < out.length() && out.charAt(i + 1) == '/')) {
                while (i < out.length() && out.charAt(i) != '\n') {
                    out.setCharAt(i++, ' ');
                }
            }
        }
        return out.toString();
    }
}
