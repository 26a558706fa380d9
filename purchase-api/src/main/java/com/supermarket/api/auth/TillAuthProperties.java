package com.supermarket.api.auth;

import java.nio.file.Path;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Till authentication ({@code platform.auth.*}).
 *
 * @param enabled                  require a key on the purchase and query endpoints ({@code TILL_AUTH_ENABLED}, off by default)
 * @param keysFile                 the key hashes file ({@code TILL_KEYS_FILE}); required when enabled
 * @param reloadInterval           how often the file is read again ({@code TILL_KEYS_RELOAD_INTERVAL})
 * @param refusalLogLinesPerSecond most refusal log lines a second ({@code TILL_AUTH_REFUSAL_LOG_RATE})
 */
@ConfigurationProperties("platform.auth")
record TillAuthProperties(@DefaultValue("false") boolean enabled, Path keysFile,
                          @DefaultValue("10s") Duration reloadInterval,
                          @DefaultValue("10") int refusalLogLinesPerSecond) {

    TillAuthProperties {
        if (keysFile != null && keysFile.toString().isEmpty()) {
            keysFile = null; // TILL_KEYS_FILE= (empty) is "not set"
        }
        if (enabled && keysFile == null) {
            throw new IllegalArgumentException("TILL_AUTH_ENABLED=true needs TILL_KEYS_FILE (platform.auth.keys-file), "
                    + "the till key hashes file (scripts/till-keys.sh issue writes it)");
        }
        if (reloadInterval.isNegative() || reloadInterval.isZero()) {
            throw new IllegalArgumentException("platform.auth.reload-interval must be positive");
        }
    }
}
