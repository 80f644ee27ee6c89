/* Helpers of conv_test_support.h for the tests that write files (the report,
 * the program body): temporary paths, reading a file back, JSON syntax. */
#include "conv_test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void conv_test_temp_path(char *buf, size_t len, const char *suffix)
{
    const char *dir = getenv("TMPDIR");
    char base[256];
    snprintf(base, sizeof base, "%s/conv_test_XXXXXX", dir != NULL && dir[0] ? dir : "/tmp");
    int fd = mkstemp(base);
    cr_assert_geq(fd, 0, "mkstemp(%s) failed", base);
    close(fd);
    remove(base);
    int n = snprintf(buf, len, "%s%s", base, suffix);
    cr_assert(n > 0 && (size_t)n < len, "temporary path too long");
}

char *conv_test_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    size_t got;
    while (text != NULL && (got = fread(text + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len - 1 == 0) {
            char *more = realloc(text, cap * 2);
            if (more == NULL)
                free(text);
            text = more;
            cap *= 2;
        }
    }
    fclose(f);
    if (text != NULL)
        text[len] = '\0';
    return text;
}

/* A recursive-descent check of JSON syntax (no values are kept). */
typedef struct {
    const char *s;
    size_t at;
} json_cursor;

static void json_space(json_cursor *j)
{
    while (j->s[j->at] == ' ' || j->s[j->at] == '\t' || j->s[j->at] == '\n' || j->s[j->at] == '\r')
        ++j->at;
}

static int json_digits(json_cursor *j)
{
    size_t start = j->at;
    while (j->s[j->at] >= '0' && j->s[j->at] <= '9')
        ++j->at;
    return j->at > start;
}

static int json_string(json_cursor *j)
{
    if (j->s[j->at] != '"')
        return 0;
    for (++j->at;;) {
        unsigned char c = (unsigned char)j->s[j->at++];
        if (c == '"')
            return 1;
        if (c < 0x20) /* the end of the text, or a raw control character */
            return 0;
        if (c != '\\')
            continue;
        c = (unsigned char)j->s[j->at++];
        if (c == 'u') {
            for (int i = 0; i < 4; ++i, ++j->at)
                if (j->s[j->at] == '\0' || strchr("0123456789abcdefABCDEF", j->s[j->at]) == NULL)
                    return 0;
        } else if (c == '\0' || strchr("\"\\/bfnrt", c) == NULL) {
            return 0;
        }
    }
}

static int json_number(json_cursor *j)
{
    if (j->s[j->at] == '-')
        ++j->at;
    if (j->s[j->at] == '0')
        ++j->at;
    else if (!json_digits(j))
        return 0;
    if (j->s[j->at] == '.') {
        ++j->at;
        if (!json_digits(j))
            return 0;
    }
    if (j->s[j->at] == 'e' || j->s[j->at] == 'E') {
        ++j->at;
        if (j->s[j->at] == '+' || j->s[j->at] == '-')
            ++j->at;
        if (!json_digits(j))
            return 0;
    }
    return 1;
}

static int json_value(json_cursor *j, int depth);

/* An object ('{' key: value, ... '}') or an array ('[' value, ... ']'). */
static int json_container(json_cursor *j, int depth, char close, int keyed)
{
    ++j->at;
    json_space(j);
    if (j->s[j->at] == close) {
        ++j->at;
        return 1;
    }
    for (;;) {
        json_space(j);
        if (keyed) {
            if (!json_string(j))
                return 0;
            json_space(j);
            if (j->s[j->at++] != ':')
                return 0;
        }
        if (!json_value(j, depth + 1))
            return 0;
        json_space(j);
        char c = j->s[j->at++];
        if (c == close)
            return 1;
        if (c != ',')
            return 0;
    }
}

static int json_value(json_cursor *j, int depth)
{
    json_space(j);
    if (depth > 64)
        return 0;
    const char c = j->s[j->at];
    if (c == '{')
        return json_container(j, depth, '}', 1);
    if (c == '[')
        return json_container(j, depth, ']', 0);
    if (c == '"')
        return json_string(j);
    if (c == '-' || (c >= '0' && c <= '9'))
        return json_number(j);
    static const char *const words[] = {"true", "false", "null"};
    for (size_t i = 0; i < 3; ++i)
        if (strncmp(j->s + j->at, words[i], strlen(words[i])) == 0) {
            j->at += strlen(words[i]);
            return 1;
        }
    return 0;
}

int conv_test_json_valid(const char *text, size_t *where)
{
    json_cursor j = {text, 0};
    int ok = json_value(&j, 0);
    if (ok) {
        json_space(&j);
        ok = j.s[j.at] == '\0';
    }
    if (where != NULL)
        *where = j.at;
    return ok;
}
