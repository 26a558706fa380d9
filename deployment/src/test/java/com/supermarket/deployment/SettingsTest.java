package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import com.supermarket.deployment.SettingsCatalog.Setting;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * One settings vocabulary: a service's environment variable is its property path upper-cased
 * ({@link SettingsCatalog#variableOf}) unless it is one of the listed conventional names, each
 * service's settings stay under its own prefix, and docs/settings.md is what the services read
 * today. Run with {@code -Dsettings.regenerate=true} ({@link SettingsCatalog#REGENERATE}) to
 * rewrite docs/settings.md first.
 */
class SettingsTest {

    @Test
    void everyVariableIsItsPropertyUpperCasedOrAListedException() {
        List<String> offending = new ArrayList<>();
        for (Setting setting : SettingsCatalog.shared()) {
            check(setting, true, offending);
        }
        for (String service : ServiceSettings.SERVICES) {
            SettingsCatalog.service(service).stream().filter(s -> s.variable() != null)
                    .forEach(setting -> check(setting, false, offending));
        }

        assertThat(offending).as("variables named otherwise than their property (docs/settings.md states the rule)")
                .isEmpty();
    }

    @Test
    void eachServiceSetsOnlyItsOwnPrefixAndLeavesPlatformToTheSharedFile() {
        SettingsCatalog.PREFIXES.forEach((service, prefix) -> {
            List<String> foreign = SettingsCatalog.service(service).stream().map(Setting::property)
                    .filter(p -> p.startsWith("platform.") || SettingsCatalog.PREFIXES.values().stream()
                            .anyMatch(other -> !other.equals(prefix) && p.startsWith(other)))
                    .toList();

            assertThat(foreign).as(service + " settings outside " + prefix + "*").isEmpty();
        });
        assertThat(SettingsCatalog.shared()).extracting(Setting::property).allMatch(p -> p.startsWith("platform."));
    }

    @Test
    void theRuleNamesAPropertysVariable() {
        assertThat(SettingsCatalog.variableOf("api.publish.batch.max-in-flight")).isEqualTo("API_PUBLISH_BATCH_MAX_IN_FLIGHT");
        assertThat(SettingsCatalog.isException("RABBITMQ_HOST", false)).isTrue();
        assertThat(SettingsCatalog.isException("BROKER_DECLARE", false)).as("shared block only").isFalse();
        assertThat(SettingsCatalog.isException("BROKER_DECLARE", true)).isTrue();
    }

    @Test
    void everyServiceSettingHasADescription() {
        for (String service : ServiceSettings.SERVICES) {
            Map<String, String> metadata = SettingsCatalog.metadata(service);
            String prefix = SettingsCatalog.PREFIXES.get(service);

            assertThat(metadata.keySet()).as(service + " metadata").isNotEmpty().allMatch(p -> p.startsWith(prefix));
            metadata.forEach((property, description) -> assertThat(description)
                    .as(property + ": Javadoc on its record component").isNotBlank());
        }
    }

    @Test
    void docsSettingsIsCurrent() throws IOException {
        String expected = SettingsCatalog.markdown();
        if (Boolean.getBoolean("settings.regenerate")) {
            Files.writeString(DeploymentFiles.resolve(SettingsCatalog.DOC), expected);
        }

        assertThat(DeploymentFiles.read(SettingsCatalog.DOC))
                .as(SettingsCatalog.DOC + " is stale; regenerate it: " + SettingsCatalog.REGENERATE)
                .isEqualTo(expected);
    }

    private static void check(Setting setting, boolean sharedFile, List<String> offending) {
        if (!setting.variable().equals(SettingsCatalog.variableOf(setting.property()))
                && !SettingsCatalog.isException(setting.variable(), sharedFile)) {
            offending.add(setting.variable() + " for " + setting.property() + " (" + setting.file() + "), want "
                    + SettingsCatalog.variableOf(setting.property()));
        }
    }
}
