package com.supermarket.api.auth;

import java.nio.file.Path;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Till authentication ({@code api.auth.*}).
 *
 * @param enabled                  require a key on the purchase and query endpoints (off by default)
 * @param keysFile                 the key hashes file; required when enabled
 * @param reloadInterval           how often the file is read again
 * @param refusalLogLinesPerSecond most refusal log lines a second
 */
@ConfigurationProperties("api.auth")
record TillAuthProperties(@DefaultValue("false") boolean enabled, Path keysFile,
                          @DefaultValue("10s") Duration reloadInterval,
                          @DefaultValue("10") int refusalLogLinesPerSecond) {

    TillAuthProperties {
        if (keysFile != null && keysFile.toString().isEmpty()) {
            keysFile = null; // API_AUTH_KEYS_FILE= (empty) is "not set"
        }
        if (enabled && keysFile == null) {
            throw new IllegalArgumentException("API_AUTH_ENABLED=true needs API_AUTH_KEYS_FILE (api.auth.keys-file), "
                    + "the till key hashes file (scripts/till-keys.sh issue writes it)");
        }
        if (reloadInterval.isNegative() || reloadInterval.isZero()) {
            throw new IllegalArgumentException("api.auth.reload-interval must be positive");
        }
    }
}
