# A tiny analysis: counts the words of the project's own data file.
import collections

with open("data.txt", encoding="utf-8") as f:
    words = f.read().split()
for word, n in collections.Counter(words).most_common(3):
    print(n, word)
