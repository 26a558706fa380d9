package com.supermarket.api.auth;

import static com.supermarket.api.auth.TillKeysTesting.line;
import static com.supermarket.api.auth.TillKeysTesting.sha256Hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class TillKeyTableTest {

    private static byte[] digest(String key) {
        return HexFormat.of().parseHex(sha256Hex(key));
    }

    @Test
    void findsEachKeyByItsHashWithItsScopeExpiryAndLabel() {
        TillKeyTable table = TillKeyTable.parse("# hashes\n"
                + line("7", "tk_seven", "label=till-2")
                + "\n   \n"
                + line("7", "tk_seven_old", "until=2026-12-01T00:00:00Z") + "  # rotated\n"
                + line("manager", "tk_boss"));

        assertThat(table.size()).isEqualTo(3);
        assertThat(table.managerKeys()).isEqualTo(1);
        TillKeyTable.Entry seven = table.find(digest("tk_seven"));
        assertThat(seven.scope()).isEqualTo(7);
        assertThat(seven.label()).isEqualTo("till-2");
        assertThat(seven.notAfter()).isEqualTo(Long.MAX_VALUE);
        assertThat(table.find(digest("tk_seven_old")).notAfter())
                .isEqualTo(Instant.parse("2026-12-01T00:00:00Z").toEpochMilli());
        assertThat(table.find(digest("tk_boss")).isManager()).isTrue();
        assertThat(table.find(digest("tk_nobody"))).isNull();
    }

    @Test
    void holdsAThousandStoresWithOneKeyEach() {
        StringBuilder file = new StringBuilder();
        for (int store = 1; store <= 1024; store++) {
            file.append(line(Integer.toString(store), "tk_store_" + store));
        }

        TillKeyTable table = TillKeyTable.parse(file.toString());

        for (int store = 1; store <= 1024; store++) {
            assertThat(table.find(digest("tk_store_" + store)).scope()).isEqualTo(store);
        }
        assertThat(table.find(digest("tk_store_1025"))).isNull();
    }

    @Test
    void anEmptyFileHoldsNoKeys() {
        assertThat(TillKeyTable.parse("").find(digest("tk_any"))).isNull();
    }

    @Test
    void refusesAMalformedLineNamingIt() {
        assertThatThrownBy(() -> TillKeyTable.parse(line("7", "a") + "7 abc\n"))
                .hasMessageContaining("line 2").hasMessageContaining("64 hex digits");
        assertThatThrownBy(() -> TillKeyTable.parse("zero " + sha256Hex("a")))
                .hasMessageContaining("store id or 'manager'");
        assertThatThrownBy(() -> TillKeyTable.parse("0 " + sha256Hex("a")))
                .hasMessageContaining("start at 1");
        assertThatThrownBy(() -> TillKeyTable.parse("7 " + "g".repeat(64)))
                .hasMessageContaining("not hexadecimal");
        assertThatThrownBy(() -> TillKeyTable.parse(line("7", "a", "until=tomorrow")))
                .hasMessageContaining("ISO-8601");
        assertThatThrownBy(() -> TillKeyTable.parse(line("7", "a", "colour=red")))
                .hasMessageContaining("unknown field");
        assertThatThrownBy(() -> TillKeyTable.parse(line("7", "a") + line("8", "a")))
                .hasMessageContaining("listed twice");
    }
}
