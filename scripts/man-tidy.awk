# Drops the paragraph macros scdoc writes where they do nothing, which mandoc
# -T lint reports as "skipping paragraph macro": a .P right after the title,
# a section heading or another .P, and one followed by a heading, another
# paragraph or the end of the page. One before the end of an indented block
# moves after it: groff then keeps the blank line between a list's entries.
# usage: scdoc < PAGE.scd | awk -f scripts/man-tidy.awk
function is_para(l) { return l ~ /^\.(P|PP|LP)[ \t]*$/ }
{
    if (held != "") {
        if ($0 ~ /^\.RE([ \t]|$)/) {
            print
            last = $0
            next
        }
        if (is_para($0) || $0 ~ /^\.(SH|SS)([ \t]|$)/)
            held = ""
        else {
            print held
            held = ""
        }
    }
    if (is_para($0)) {
        if (last !~ /^\.(TH|SH|SS|P|PP|LP)([ \t]|$)/)
            held = $0
        next
    }
    print
    if ($0 !~ /^\.\\"/)
        last = $0
}
