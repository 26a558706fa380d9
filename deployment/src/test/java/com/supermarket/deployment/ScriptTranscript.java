package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

/**
 * A script's {@code --dry-run} transcript (scripts/eks.sh, scripts/k8s-install.sh): each command it
 * would run, as {@code printf %q} printed it, with the manifest it would apply on its standard
 * input, parsed by fabric8. Stateless; thread-safe.
 */
final class ScriptTranscript {

    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    private ScriptTranscript() {
    }

    /** One command of the transcript: its line, its words (shell-unquoted), the manifest it applies. */
    record Step(String line, List<String> words, HasMetadata manifest) {

        /** The namespace the step works in: {@code -n X}, {@code --namespace X}, or the manifest's. */
        String namespace() {
            int flag = IntStream.range(0, words.size() - 1)
                    .filter(i -> words.get(i).equals("-n") || words.get(i).equals("--namespace")).findFirst().orElse(-1);
            if (flag >= 0) {
                return words.get(flag + 1);
            }
            return manifest == null || manifest instanceof Namespace ? null : manifest.getMetadata().getNamespace();
        }
    }

    /** The script's {@code --dry-run} transcript: every "+ " line, with the manifest of a here-document. */
    static List<Step> dryRun(Path script, String... args) {
        return dryRun(script, Map.of(), args);
    }

    /** The transcript of the script run with these environment variables besides the inherited ones. */
    static List<Step> dryRun(Path script, Map<String, String> env, String... args) {
        List<String> command = new ArrayList<>(List.of("bash", script.toString(), "--dry-run"));
        command.addAll(List.of(args));
        Result result = exec(command, env);
        assertThat(result.status()).as("%s --dry-run %s: %s", script.getFileName(), String.join(" ", args), result.output()).isZero();
        List<Step> steps = new ArrayList<>();
        String[] lines = result.output().split("\n");
        for (int i = 0; i < lines.length; i++) {
            if (!lines[i].startsWith("+ ")) {
                continue;
            }
            String line = lines[i];
            HasMetadata manifest = null;
            if (line.endsWith("<<EOF")) {
                manifest = SERIALIZATION.unmarshal(lines[++i], HasMetadata.class);
                assertThat(lines[++i]).isEqualTo("EOF");
            }
            steps.add(new Step(line, shellWords(line.substring(2)), manifest));
        }
        assertThat(steps).isNotEmpty();
        return steps;
    }

    /** Splits a line as bash's {@code printf %q} quoted it: backslash escapes, '...' and $'...'. */
    static List<String> shellWords(String line) {
        List<String> words = new ArrayList<>();
        StringBuilder word = null;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (c == ' ') {
                if (word != null) {
                    words.add(word.toString());
                    word = null;
                }
                continue;
            }
            if (word == null) {
                word = new StringBuilder();
            }
            if (c == '\\' && i + 1 < line.length()) {
                word.append(line.charAt(++i));
            } else if (c == '\'') {
                int end = line.indexOf('\'', i + 1);
                word.append(line, i + 1, end);
                i = end;
            } else if (c == '$' && i + 1 < line.length() && line.charAt(i + 1) == '\'') {
                for (i += 2; line.charAt(i) != '\''; i++) {
                    char d = line.charAt(i);
                    if (d == '\\') {
                        char e = line.charAt(++i);
                        word.append(e == 'n' ? '\n' : e == 't' ? '\t' : e);
                    } else {
                        word.append(d);
                    }
                }
            } else {
                word.append(c);
            }
        }
        if (word != null) {
            words.add(word.toString());
        }
        return words;
    }

    record Result(int status, String output) {
    }

    /** Runs a command from the repository root: its exit status and output (standard error merged in). */
    static Result exec(List<String> command, Map<String, String> env) {
        try {
            ProcessBuilder builder = new ProcessBuilder(command).directory(DeploymentFiles.root().toFile())
                    .redirectErrorStream(true);
            builder.environment().putAll(env);
            Process process = builder.start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError(command + " did not finish within 60 s");
            }
            return new Result(process.exitValue(), output);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
