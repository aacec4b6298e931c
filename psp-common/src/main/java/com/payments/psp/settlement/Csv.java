package com.payments.psp.settlement;

import java.util.ArrayList;
import java.util.List;

/** One line of an RFC 4180 CSV file: comma-separated fields, a field may be double-quoted with {@code ""} inside. */
final class Csv {
    private Csv() {}

    static List<String> split(String line, long lineNo) {
        List<String> fields = new ArrayList<>(20);
        int i = 0;
        int n = line.length();
        while (true) {
            if (i < n && line.charAt(i) == '"') {
                StringBuilder sb = new StringBuilder();
                i++;
                while (true) {
                    if (i >= n) {
                        throw new SettlementFormatException(lineNo, "unterminated quoted field");
                    }
                    char c = line.charAt(i++);
                    if (c == '"') {
                        if (i < n && line.charAt(i) == '"') {
                            sb.append('"');
                            i++;
                        } else {
                            break;
                        }
                    } else {
                        sb.append(c);
                    }
                }
                fields.add(sb.toString());
                if (i == n) {
                    return fields;
                }
                if (line.charAt(i) != ',') {
                    throw new SettlementFormatException(lineNo, "text after a quoted field");
                }
                i++;
            } else {
                int comma = line.indexOf(',', i);
                if (comma < 0) {
                    fields.add(line.substring(i));
                    return fields;
                }
                fields.add(line.substring(i, comma));
                i = comma + 1;
            }
        }
    }

    static String stripCr(String line) {
        return line.endsWith("\r") ? line.substring(0, line.length() - 1) : line;
    }

    static String stripBom(String header) {
        return header.startsWith("\uFEFF") ? header.substring(1) : header;
    }
}
