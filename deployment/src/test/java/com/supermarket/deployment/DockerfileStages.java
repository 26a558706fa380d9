package com.supermarket.deployment;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The root Dockerfile read as its stages. Each module's image is the stage named after the module
 * ({@code --build-arg MODULE=...} picks it with the last {@code FROM ${MODULE}}), and what that
 * image is made of is the chain of stages from a base image down to it. Stateless; thread-safe.
 */
final class DockerfileStages {

    static final String FILE = "Dockerfile";
    private static final Pattern FROM = Pattern.compile("(?m)^FROM\\s+(\\S+)(?:\\s+AS\\s+(\\S+))?\\s*$");

    /** One stage: what it is built FROM, its name (null for an unnamed one) and its instructions. */
    record Stage(String from, String name, String text) {
    }

    private DockerfileStages() {
    }

    /** Every stage of the root Dockerfile, in order. */
    static List<Stage> stages() {
        return stages(DeploymentFiles.read(FILE));
    }

    static List<Stage> stages(String dockerfile) {
        List<Stage> stages = new ArrayList<>();
        Matcher from = FROM.matcher(dockerfile);
        List<int[]> starts = new ArrayList<>();
        List<String[]> heads = new ArrayList<>();
        while (from.find()) {
            starts.add(new int[] { from.start() });
            heads.add(new String[] { from.group(1), from.group(2) });
        }
        for (int i = 0; i < starts.size(); i++) {
            int end = i + 1 < starts.size() ? starts.get(i + 1)[0] : dockerfile.length();
            stages.add(new Stage(heads.get(i)[0], heads.get(i)[1], dockerfile.substring(starts.get(i)[0], end)));
        }
        return stages;
    }

    /** The stages by name. */
    static Map<String, Stage> named() {
        Map<String, Stage> named = new LinkedHashMap<>();
        stages().stream().filter(s -> s.name() != null).forEach(s -> named.put(s.name(), s));
        return named;
    }

    /**
     * The instructions of {@code module}'s image: its stage and the stages it is built FROM, the
     * base image's first, so that the last USER or ENTRYPOINT in it is the image's.
     */
    static String image(String module) {
        Map<String, Stage> named = named();
        List<String> chain = new ArrayList<>();
        Stage stage = named.get(module);
        if (stage == null) {
            throw new AssertionError("no stage named " + module + " in the Dockerfile");
        }
        while (stage != null) {
            chain.addFirst(stage.text());
            stage = named.get(stage.from());
        }
        return String.join("", chain);
    }

    /** The base image argument (e.g. JAVA_RUNTIME_IMAGE) at the root of {@code module}'s chain. */
    static String baseImageArgument(String module) {
        Map<String, Stage> named = named();
        Stage stage = named.get(module);
        while (named.containsKey(stage.from())) {
            stage = named.get(stage.from());
        }
        return stage.from().replaceAll("^\\$\\{(\\w+)}$", "$1");
    }
}
